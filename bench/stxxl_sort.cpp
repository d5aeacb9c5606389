// STXXL comparison program for bench/em_sort_compare.sh.
//
// Sorts a file of raw little-endian uint64 keys with STXXL 1.4 (Debian's libstxxl-dev),
// either with stxxl::sorter (push everything, sort, stream out) or with stxxl::sort on an
// stxxl::vector, in a given amount of memory, and writes the sorted keys to a file. The
// time printed covers reading the input file, sorting and writing the output file, as
// flashkit's figure does. STXXL's own disk file comes from the .stxxl config file the
// script writes (syscall I/O, which STXXL opens with O_DIRECT).
//
// Usage: stxxl_sort sorter|sort INPUT OUTPUT MEMORY_BYTES
//        stxxl_sort totext INPUT OUTPUT 0   (keys as zero-padded 20-digit lines, for
//                                            coreutils sort)
#include <stxxl/sorter>
#include <stxxl/sort>
#include <stxxl/vector>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

struct Less {
    bool operator()(const uint64_t& a, const uint64_t& b) const { return a < b; }
    uint64_t min_value() const { return std::numeric_limits<uint64_t>::min(); }
    uint64_t max_value() const { return std::numeric_limits<uint64_t>::max(); }
};

static const size_t kChunk = 1 << 20;  // keys per fread / fwrite

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s sorter|sort INPUT OUTPUT MEMORY_BYTES\n", argv[0]);
        return 2;
    }
    const bool use_sorter = std::strcmp(argv[1], "sorter") == 0;
    const size_t memory = std::strtoull(argv[4], nullptr, 10);
    FILE* in = std::fopen(argv[2], "rb");
    FILE* out = std::fopen(argv[3], "wb");
    if (!in || !out) {
        std::fprintf(stderr, "cannot open %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    std::vector<uint64_t> chunk(kChunk);
    if (std::strcmp(argv[1], "totext") == 0) {
        size_t n;
        while ((n = std::fread(chunk.data(), 8, kChunk, in)) > 0) {
            for (size_t i = 0; i < n; ++i) std::fprintf(out, "%020llu\n", (unsigned long long)chunk[i]);
        }
        std::fclose(out);
        std::fclose(in);
        return 0;
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t count = 0;
    if (use_sorter) {
        stxxl::sorter<uint64_t, Less> sorter(Less(), memory);
        size_t n;
        while ((n = std::fread(chunk.data(), 8, kChunk, in)) > 0) {
            for (size_t i = 0; i < n; ++i) sorter.push(chunk[i]);
            count += n;
        }
        sorter.sort();
        size_t filled = 0;
        while (!sorter.empty()) {
            chunk[filled++] = *sorter;
            ++sorter;
            if (filled == kChunk) {
                std::fwrite(chunk.data(), 8, filled, out);
                filled = 0;
            }
        }
        std::fwrite(chunk.data(), 8, filled, out);
    } else {
        typedef stxxl::VECTOR_GENERATOR<uint64_t>::result vector_type;
        vector_type v;
        size_t n;
        while ((n = std::fread(chunk.data(), 8, kChunk, in)) > 0) {
            for (size_t i = 0; i < n; ++i) v.push_back(chunk[i]);
            count += n;
        }
        stxxl::sort(v.begin(), v.end(), Less(), memory);
        size_t filled = 0;
        for (vector_type::const_iterator it = v.begin(); it != v.end(); ++it) {
            chunk[filled++] = *it;
            if (filled == kChunk) {
                std::fwrite(chunk.data(), 8, filled, out);
                filled = 0;
            }
        }
        std::fwrite(chunk.data(), 8, filled, out);
    }
    std::fclose(out);
    std::fclose(in);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("stxxl %s: %llu keys in %.2f s\n", argv[1], (unsigned long long)count, seconds);
    return 0;
}

//! Tables of text cells: aligned text and CSV.

use std::io::Write;

/// A table of text cells with a header row.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Table {
    /// Column headers.
    pub header: Vec<String>,
    /// Rows; each as long as the header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these headers.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row.
    ///
    /// # Panics
    /// If the row's length differs from the header's (a caller bug).
    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        let row: Vec<String> = row.into_iter().map(Into::into).collect();
        assert_eq!(
            row.len(),
            self.header.len(),
            "row length must match the header"
        );
        self.rows.push(row);
    }

    /// The table with rows and columns swapped (the first column becomes the header).
    pub fn transposed(&self) -> Table {
        let columns = self.header.len();
        let mut out = Table::default();
        for c in 0..columns {
            let mut line = vec![self.header[c].clone()];
            line.extend(self.rows.iter().map(|row| row[c].clone()));
            if c == 0 {
                out.header = line;
            } else {
                out.rows.push(line);
            }
        }
        out
    }

    /// Aligned text: numbers right-aligned and grouped, text left-aligned.
    pub fn render(&self) -> String {
        let cells: Vec<Vec<String>> = std::iter::once(self.header.clone())
            .chain(
                self.rows
                    .iter()
                    .map(|row| row.iter().map(|c| decorate(c)).collect()),
            )
            .collect();
        let columns = self.header.len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                cells
                    .iter()
                    .map(|row| row[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (r, row) in cells.iter().enumerate() {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = widths[c] - cell.chars().count();
                if r > 0 && c > 0 && is_numeric(cell) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
                out.push_str(&rule.join("  "));
                out.push('\n');
            }
        }
        out
    }

    /// Write the raw cells as CSV.
    pub fn write_csv<W: Write>(&self, out: W) -> Result<(), csv::Error> {
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(&self.header)?;
        for row in &self.rows {
            writer.write_record(row)?;
        }
        writer.flush()?;
        Ok(())
    }
}

fn is_numeric(cell: &str) -> bool {
    let body = cell.strip_prefix('-').unwrap_or(cell);
    !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// Group the integer part of a plain number in thousands: `1234567.5` -> `1,234,567.5`.
fn decorate(cell: &str) -> String {
    if !is_numeric(cell) || cell.contains(',') {
        return cell.to_string();
    }
    let (sign, body) = match cell.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", cell),
    };
    let (int, frac) = match body.find('.') {
        Some(dot) => body.split_at(dot),
        None => (body, ""),
    };
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("{sign}{grouped}{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["metric", "page/greedy", "page/fifo"]);
        t.push(["erases", "1234567", "99"]);
        t.push(["write amplification", "2.5000", "3.1000"]);
        t.push(["state hash", "00ab", "ff01"]);
        t
    }

    #[test]
    fn text_is_aligned_and_grouped() {
        let text = sample().render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "metric               page/greedy  page/fifo");
        assert!(lines[1].starts_with("-------------------  "));
        assert_eq!(lines[2], "erases                 1,234,567         99");
        assert_eq!(lines[4], "state hash           00ab         ff01");
    }

    #[test]
    fn only_numbers_below_the_header_and_right_of_the_first_column_align_right() {
        let mut t = Table::new(["size", "2026"]);
        t.push(["1", "123"]);
        t.push(["1000", "-123456"]);
        t.push(["12", "0.5"]);
        assert_eq!(
            t.render(),
            "size   2026\n-----  --------\n1           123\n1,000  -123,456\n12          0.5\n"
        );
    }

    #[test]
    fn csv_keeps_raw_values() {
        let mut out = Vec::new();
        sample().write_csv(&mut out).expect("csv");
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            text.starts_with("metric,page/greedy,page/fifo\nerases,1234567,99\n"),
            "{text}"
        );
    }

    #[test]
    fn transpose_swaps_rows_and_columns() {
        let t = sample().transposed();
        assert_eq!(
            t.header,
            vec!["metric", "erases", "write amplification", "state hash"]
        );
        assert_eq!(t.rows[1], vec!["page/fifo", "99", "3.1000", "ff01"]);
        assert_eq!(t.transposed(), sample());
    }
}

//! A worn-out block is a modelled failure: an index that needs to erase it reports
//! `DeviceError::WornOut` through `IndexError::Device`, it does not panic.

use flashkit_device::{DeviceError, NorDevice, NorGeometry};
use flashkit_index::nor::{FatList, FatListConfig, IndexError, MuTree, MuTreeConfig, NorIndex};

fn wear_until_error(index: &mut dyn NorIndex) -> IndexError {
    for i in 0..1_000_000u32 {
        if let Err(error) = index.put(i % 50, i) {
            return error;
        }
    }
    panic!("{}: no block wore out", index.name());
}

fn worn(error: &IndexError) -> bool {
    matches!(error, IndexError::Device(DeviceError::WornOut { .. }))
}

#[test]
fn a_fat_list_reports_wear_out() {
    let nor = NorDevice::new(NorGeometry::new(1024, 8).expect("valid")).with_endurance(20);
    let cfg = FatListConfig {
        turnstile_blocks: 4,
        slots: 8,
        key_limit: 4,
        ..FatListConfig::default()
    };
    let mut list = FatList::create(nor, cfg, 1).expect("create");
    let error = wear_until_error(&mut list);
    assert!(worn(&error), "{error}");
    assert!(error.to_string().contains("wore out"), "{error}");
}

#[test]
fn a_mu_tree_reports_wear_out() {
    let nor = NorDevice::new(NorGeometry::new(1024, 8).expect("valid")).with_endurance(20);
    let mut tree = MuTree::create(nor, MuTreeConfig { page_bytes: 256 }).expect("create");
    let error = wear_until_error(&mut tree);
    assert!(worn(&error), "{error}");
}

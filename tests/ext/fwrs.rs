// Rust for tests/functional/test_names.py, loaded with ctypes: a generic
// method and a function, each kept out of line.
use std::collections::BTreeMap;

pub struct Grid<T> { cells: Vec<T> }

impl<T: Copy + Into<u64>> Grid<T> {
    #[inline(never)]
    pub fn checksum(&self, rounds: u32) -> u64 {
        let mut acc = 0u64;
        for r in 0..rounds {
            for c in &self.cells {
                acc = acc.wrapping_mul(31).wrapping_add((*c).into() ^ r as u64);
            }
        }
        acc
    }
}

#[inline(never)]
fn tally(n: u64) -> u64 {
    let mut m = BTreeMap::new();
    for i in 0..n { *m.entry(i % 97).or_insert(0u64) += i; }
    m.values().sum()
}

#[no_mangle]
pub extern "C" fn fwrs_work(n: u32) -> u64 {
    let g = Grid { cells: (0..4096u32).map(|x| x as u16).collect::<Vec<u16>>() };
    g.checksum(n) ^ tally(n as u64 * 10)
}

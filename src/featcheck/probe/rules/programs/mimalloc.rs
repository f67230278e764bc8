//! An allocation-heavy workload under mimalloc as the global allocator: many small boxes and
//! vectors made and dropped, and a BTreeMap of strings built and torn down.
use std::collections::BTreeMap;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    harness::time("small_allocs", 9, || {
        let mut kept: Vec<Box<[u8]>> = Vec::with_capacity(4096);
        let mut total = 0usize;
        for i in 0..400_000usize {
            let size = 16 + (i * 37) % 240;
            let block = vec![(i & 0xff) as u8; size].into_boxed_slice();
            total += block.len();
            if kept.len() < 4096 {
                kept.push(block);
            } else {
                kept[i % 4096] = block;
            }
        }
        total
    });
    harness::time("btree_strings", 9, || {
        let mut map = BTreeMap::new();
        for i in 0..100_000u64 {
            map.insert(format!("key-{:08}", i.wrapping_mul(2_654_435_761) % 1_000_003), i);
        }
        map.len()
    });
}

//! memchr on 1 MiB of text: a byte that occurs every 4 KiB, and a substring search (memmem).
fn main() {
    let mut hay = harness::text(1 << 20, 7).into_bytes();
    for i in (4096..hay.len()).step_by(4096) {
        hay[i] = b'#';
    }
    harness::time("memchr", 25, || {
        (0..16).map(|_| memchr::memchr_iter(b'#', &hay).count()).sum::<usize>()
    });
    let finder = memchr::memmem::Finder::new("request timeout");
    harness::time("memmem", 25, || {
        (0..16).map(|_| finder.find_iter(&hay).count()).sum::<usize>()
    });
}

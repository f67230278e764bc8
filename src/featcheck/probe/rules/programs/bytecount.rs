//! bytecount counting newlines in 4 MiB of text and the UTF-8 characters of 4 MiB of
//! mixed-script text (`count`, `num_chars`), sixteen times each.
fn main() {
    let ascii = harness::text(4 << 20, 11).into_bytes();
    let words = ["café ", "naïve ", "Ελληνικά ", "日本語の文章 ", "and ", "the ", "données "];
    let mut mixed = String::with_capacity((4 << 20) + 32);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    while mixed.len() < 4 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        mixed.push_str(words[(state % words.len() as u64) as usize]);
    }
    let mixed = mixed.into_bytes();
    harness::time("count", 15, || (0..16).map(|_| bytecount::count(&ascii, b'\n')).sum::<usize>());
    harness::time("num_chars", 15, || {
        (0..16).map(|_| bytecount::num_chars(&mixed)).sum::<usize>()
    });
}

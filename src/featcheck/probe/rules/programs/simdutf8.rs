//! simdutf8 validating 4 MiB of ASCII text and 4 MiB of mixed-script text (Latin with accents,
//! Greek, CJK), sixteen times each.
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
    harness::time("ascii", 15, || {
        (0..16).filter(|_| simdutf8::basic::from_utf8(&ascii).is_ok()).count()
    });
    harness::time("mixed", 15, || {
        (0..16).filter(|_| simdutf8::basic::from_utf8(&mixed).is_ok()).count()
    });
}

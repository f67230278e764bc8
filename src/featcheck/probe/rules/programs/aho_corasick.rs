//! aho-corasick on 4 MiB of text: one name that never occurs, three such names, eight such
//! names, and three frequent words, with standard match semantics and (for several patterns)
//! leftmost-first ones, the only ones aho-corasick's vectorised Teddy prefilter serves.
use aho_corasick::{AhoCorasick, MatchKind};

fn main() {
    let hay = harness::text(4 << 20, 7);
    let rare = [
        "Sherlock", "Watson", "Holmes", "Moriarty", "Lestrade", "Hudson", "Adler", "Mycroft",
    ];
    let common = ["timeout", "server", "request"];
    for (name, patterns, kind) in [
        ("rare1", &rare[..1], MatchKind::Standard),
        ("rare3", &rare[..3], MatchKind::Standard),
        ("rare8", &rare[..], MatchKind::Standard),
        ("common3", &common[..], MatchKind::Standard),
        ("rare3-leftmost", &rare[..3], MatchKind::LeftmostFirst),
        ("rare8-leftmost", &rare[..], MatchKind::LeftmostFirst),
        ("common3-leftmost", &common[..], MatchKind::LeftmostFirst),
    ] {
        let ac = AhoCorasick::builder()
            .match_kind(kind)
            .build(patterns)
            .unwrap();
        harness::time(name, 7, || ac.find_iter(&hay).count());
    }
}

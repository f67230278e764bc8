//! lz4_flex's block format on 4 MiB of words and on 4 MiB of JSON records with numbers:
//! compressing each, and decompressing the result.
fn records(bytes: usize) -> String {
    let (mut state, mut out) = (
        0x9e37_79b9_7f4a_7c15_u64,
        String::with_capacity(bytes + 256),
    );
    while out.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let (id, ms, status) = (
            state % 1_000_000_007,
            state % 9973,
            [200, 404, 500][state as usize % 3],
        );
        out.push_str(&format!(
            "{{\"id\":{id},\"user\":\"u{:x}\",\"status\":{status},\"took_ms\":{ms},\"path\":\"/api/v1/items/{}\"}}\n",
            state >> 40,
            state % 4096
        ));
    }
    out
}

fn main() {
    for (name, input) in [
        ("text", harness::text(4 << 20, 7)),
        ("records", records(4 << 20)),
    ] {
        let compressed = lz4_flex::block::compress_prepend_size(input.as_bytes());
        let round_trip = lz4_flex::block::decompress_size_prepended(&compressed).unwrap();
        assert!(
            round_trip == input.as_bytes(),
            "the round trip must give the input back"
        );
        harness::time(&format!("compress-{name}"), 7, || {
            lz4_flex::block::compress_prepend_size(input.as_bytes()).len()
        });
        harness::time(&format!("decompress-{name}"), 7, || {
            let back = lz4_flex::block::decompress_size_prepended(&compressed).unwrap();
            (back.len(), back[back.len() / 2])
        });
    }
}

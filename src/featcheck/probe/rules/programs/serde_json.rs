//! serde_json parsing 200,000 floats (an array of f64 written with 17 significant digits, as
//! serde_json itself writes them), into a `Value` and into `Vec<f64>`.
fn main() {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let numbers: Vec<f64> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6
        })
        .collect();
    let text = serde_json::to_string(&numbers).expect("serialises");
    harness::time("value", 7, || {
        let value: serde_json::Value = serde_json::from_str(&text).expect("parses");
        // Rounded: the builds may differ in the last place of a float, which is the feature's point.
        let sum = value.as_array().map_or(0.0, |a| a.iter().filter_map(|v| v.as_f64()).sum::<f64>());
        sum.round() as i64
    });
    harness::time("vec_f64", 7, || {
        let parsed: Vec<f64> = serde_json::from_str(&text).expect("parses");
        parsed.iter().sum::<f64>().round() as i64
    });
}

//! tiny-skia on a 1024 x 1024 pixmap: filling anti-aliased circles with a colour and with a
//! linear gradient, stroking a star polygon, and blending a half-transparent 512 x 512 pixmap
//! over the canvas, scaled (bilinear).
use tiny_skia::{
    BlendMode, Color, FillRule, FilterQuality, GradientStop, LinearGradient, Paint, PathBuilder,
    Pixmap, PixmapPaint, Point, SpreadMode, Stroke, Transform,
};

/// A check of the canvas, read once after the timed calls.
fn checksum(canvas: &Pixmap) -> u64 {
    canvas.data().iter().fold(0_u64, |sum, &byte| {
        sum.wrapping_mul(31).wrapping_add(byte as u64)
    })
}

fn main() {
    let mut canvas = Pixmap::new(1024, 1024).expect("a 1024 x 1024 pixmap");
    let mut circles = PathBuilder::new();
    for i in 0..64 {
        let (x, y) = ((i % 8) as f32 * 128.0 + 64.0, (i / 8) as f32 * 128.0 + 64.0);
        circles.push_circle(x, y, 40.0 + (i % 5) as f32 * 5.0);
    }
    let circles = circles.finish().expect("circles");
    let mut star = PathBuilder::new();
    star.move_to(512.0, 512.0);
    for i in 1..720 {
        let angle = i as f32 * 0.37;
        let radius = if i % 2 == 0 { 500.0 } else { 120.0 };
        star.line_to(512.0 + radius * angle.cos(), 512.0 + radius * angle.sin());
    }
    star.close();
    let star = star.finish().expect("star");
    let mut paint = Paint::default();
    paint.anti_alias = true;
    paint.set_color_rgba8(50, 127, 150, 200);
    harness::time_then(
        "fill",
        15,
        &mut canvas,
        |canvas| {
            canvas.fill(Color::WHITE);
            canvas.fill_path(
                &circles,
                &paint,
                FillRule::Winding,
                Transform::identity(),
                None,
            );
        },
        checksum,
    );
    let mut gradient = Paint::default();
    gradient.anti_alias = true;
    gradient.shader = LinearGradient::new(
        Point::from_xy(0.0, 0.0),
        Point::from_xy(1024.0, 1024.0),
        vec![
            GradientStop::new(0.0, Color::from_rgba8(50, 127, 150, 255)),
            GradientStop::new(1.0, Color::from_rgba8(220, 140, 75, 180)),
        ],
        SpreadMode::Pad,
        Transform::identity(),
    )
    .expect("a gradient");
    harness::time_then(
        "gradient",
        15,
        &mut canvas,
        |canvas| {
            canvas.fill(Color::WHITE);
            canvas.fill_path(
                &circles,
                &gradient,
                FillRule::Winding,
                Transform::identity(),
                None,
            );
        },
        checksum,
    );
    let stroke = Stroke {
        width: 3.0,
        ..Stroke::default()
    };
    harness::time_then(
        "stroke",
        15,
        &mut canvas,
        |canvas| {
            canvas.fill(Color::WHITE);
            canvas.stroke_path(&star, &paint, &stroke, Transform::identity(), None);
        },
        checksum,
    );
    let mut layer = Pixmap::new(512, 512).expect("a 512 x 512 pixmap");
    for (i, pixel) in layer.pixels_mut().iter_mut().enumerate() {
        let (x, y) = ((i % 512) as u8, (i / 512) as u8);
        let color = tiny_skia::ColorU8::from_rgba(x, y, x ^ y, 160);
        *pixel = color.premultiply();
    }
    let blend = PixmapPaint {
        blend_mode: BlendMode::Multiply,
        quality: FilterQuality::Bilinear,
        ..PixmapPaint::default()
    };
    harness::time_then(
        "blend",
        15,
        &mut canvas,
        |canvas| {
            canvas.fill(Color::from_rgba8(200, 180, 160, 255));
            canvas.draw_pixmap(
                0,
                0,
                layer.as_ref(),
                &blend,
                Transform::from_scale(2.0, 2.0),
                None,
            );
        },
        checksum,
    );
}

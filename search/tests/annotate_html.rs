//! `copper annotate --html`: the page is self-contained and, in a real
//! headless Chromium driven over WebDriver, loads without script or
//! console errors, plots the bound with the simulated points, and takes a
//! click on a finding to its line. Without Chromium and ChromeDriver the
//! browser part is skipped with a message, unless `COPPER_REQUIRE_BROWSER`
//! is set (`.ci/run` sets it and installs both).

mod common;
mod webdriver;

use std::path::{Path, PathBuf};

use common::{copper_in, root, text, Scratch};
use serde_json::json;

/// The page for `testdata/addSub0.cu` (a kernel with findings, a loop
/// whose bound grows with `w`, and a rewrite), in `scratch`.
fn page(scratch: &Scratch) -> PathBuf {
    let source = std::fs::read(root().join("testdata/addSub0.cu")).expect("fixture");
    let params = std::fs::read(root().join("testdata/addSub0.toml")).expect("fixture");
    scratch.file("addSub0.cu", &source);
    scratch.file("addSub0.toml", &params);
    let dir = scratch.path();
    let out = dir.join("page.html");
    let o = copper_in(dir, &["annotate", "addSub0.cu", "--html", "page.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("wrote page.html (1 kernel)"),
        "{}",
        text(&o)
    );
    out
}

#[test]
fn the_page_holds_source_findings_plot_and_diff_without_outside_files() {
    let scratch = Scratch::new();
    let html = std::fs::read_to_string(page(&scratch)).expect("the page");
    for part in [
        "<table class=\"source\">",
        "<a class=\"finding\" href=\"#k0-L15\">",
        "<svg class=\"plot\"",
        "<polyline class=\"bound\"",
        "<pre class=\"diff\">",
        "branch distribution",
        "B[j * w + i] = B_elem + A_elem;",
    ] {
        assert!(html.contains(part), "missing {part:?} in\n{html}");
    }
    assert!(html.matches("<circle class=\"sim\"").count() >= 4, "{html}");
    // Self-contained: nothing is fetched.
    for outside in ["src=", "href=\"http", "<link", "@import", "url("] {
        assert!(!html.contains(outside), "{outside:?} in\n{html}");
    }
    // The hottest line is shaded most.
    let hot = html
        .lines()
        .find(|l| l.starts_with("<tr id=\"k0-L15\""))
        .expect("line 15");
    assert!(hot.contains("rgba(230, 90, 30, 0.58)"), "{hot}");
}

#[test]
fn the_page_works_in_a_headless_browser() {
    let scratch = Scratch::new();
    let page = page(&scratch);
    let (driver, browser) = match webdriver::Driver::start() {
        Ok(Some(d)) => d,
        Ok(None) if std::env::var_os("COPPER_REQUIRE_BROWSER").is_some() => {
            panic!("COPPER_REQUIRE_BROWSER is set but chromium or chromedriver is missing")
        }
        Ok(None) => {
            eprintln!(
                "skipped: no chromium and chromedriver (Debian's `chromium` and `chromium-driver` packages)"
            );
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let profile = page.with_file_name("profile");
    let session = driver.session(&browser, &profile).expect("a session");
    session.open(&file_url(&page)).expect("the page opens");
    let errors = session
        .run("return window.copperErrors;")
        .expect("a script");
    assert_eq!(errors, json!([]), "script errors");
    let severe: Vec<_> = session
        .console()
        .expect("the console")
        .into_iter()
        .filter(|e| e["level"] == json!("SEVERE"))
        .collect();
    assert!(severe.is_empty(), "console errors: {severe:?}");
    // The plot: the bound's curve and the simulated points, drawn inside
    // the plot's box.
    let points = session.find_all("svg.plot circle.sim").expect("points");
    assert!(points.len() >= 4, "{} points", points.len());
    let inside = session
        .run(
            "var box = document.querySelector('svg.plot').getBoundingClientRect();
             return Array.from(document.querySelectorAll('svg.plot circle.sim')).every(function (c) {
               var r = c.getBoundingClientRect();
               return r.width > 0 && r.left >= box.left && r.right <= box.right
                 && r.top >= box.top && r.bottom <= box.bottom;
             });",
        )
        .expect("a script");
    assert_eq!(inside, json!(true), "a point outside the plot");
    let curve = session
        .run("return document.querySelector('svg.plot polyline.bound').points.numberOfItems;")
        .expect("a script");
    assert!(curve.as_u64().unwrap_or(0) >= 10, "curve of {curve} points");
    // A finding takes a click to its line: selected and in view.
    let links = session.find_all("a.finding").expect("findings");
    assert!(links.len() >= 2, "{} findings", links.len());
    session.click(&links[1]).expect("a click");
    let at = session
        .run(
            "var row = document.querySelector('tr.selected');
             if (!row) { return null; }
             var r = row.getBoundingClientRect();
             return [location.hash, row.id, r.top >= 0 && r.bottom <= window.innerHeight];",
        )
        .expect("a script");
    assert_eq!(at, json!(["#k0-L15", "k0-L15", true]), "after the click");
    let errors = session
        .run("return window.copperErrors;")
        .expect("a script");
    assert_eq!(errors, json!([]), "script errors after the click");
}

/// `path` as a `file://` URL.
fn file_url(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).expect("the page exists");
    format!("file://{}", abs.display())
}

//! The docs' example output is what the binary prints: every `$ copper …`
//! command shown in a `text` block of `README.md` and of the docs listed
//! in [`CHECKED`] is run from the workspace root, and its output must match
//! the lines under it, timings aside. A command may end in `| grep 'TEXT'`,
//! which keeps the lines holding `TEXT`.

mod common;

use common::{copper_in, root};

/// `text` with every duration (`151 ms`, `0.15 s`) replaced by `<t>`.
fn without_timings(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let mut kept = Vec::with_capacity(words.len());
        let mut i = 0;
        while i < words.len() {
            let unit = words.get(i + 1).map(|u| u.trim_end_matches([',', ')']));
            if words[i].parse::<f64>().is_ok() && matches!(unit, Some("ms" | "s")) {
                let rest = &words[i + 1][unit.unwrap_or("").len()..];
                kept.push(format!("<t>{rest}"));
                i += 2;
            } else {
                kept.push(words[i].to_string());
                i += 1;
            }
        }
        out.push_str(&kept.join(" "));
        out.push('\n');
    }
    out
}

/// The `$ copper …` commands of the README's `text` blocks, each with the
/// output shown under it (up to the next `$` line or the block's end).
fn examples(readme: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut in_text = false;
    let mut current: Option<(Vec<String>, String)> = None;
    for line in readme.lines() {
        if !in_text {
            in_text = line == "```text";
            continue;
        }
        if line == "```" || line.starts_with("$ ") {
            out.extend(current.take());
        }
        if line == "```" {
            in_text = false;
        } else if let Some(cmd) = line.strip_prefix("$ copper ") {
            current = Some((cmd.split(' ').map(String::from).collect(), String::new()));
        } else if let Some((_, shown)) = current.as_mut() {
            shown.push_str(line);
            shown.push('\n');
        }
    }
    out
}

/// The files whose examples are checked.
const CHECKED: [&str; 4] = [
    "README.md",
    "docs/commands.md",
    "docs/bounds.md",
    "docs/lint-rules.md",
];

#[test]
fn doc_examples_are_what_copper_prints() {
    for doc in CHECKED {
        let markdown = std::fs::read_to_string(root().join(doc)).unwrap();
        let examples = examples(&markdown);
        assert!(!examples.is_empty(), "no `$ copper` example in {doc}");
        for (mut args, shown) in examples {
            let mut filter = None;
            if let Some(bar) = args.iter().position(|a| a == "|") {
                let pattern = args[bar + 2..].join(" ");
                assert_eq!(args[bar + 1], "grep", "{doc}: only `| grep` is understood");
                filter = Some(pattern.trim_matches('\'').to_string());
                args.truncate(bar);
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            // Diagnostics (stderr) come before results in every example,
            // as a terminal shows them when a file is read before anything
            // is printed.
            let out = copper_in(&root(), &argv);
            let mut printed = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
            if let Some(pattern) = filter {
                printed = printed
                    .lines()
                    .filter(|l| l.contains(&pattern))
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
            assert_eq!(
                without_timings(&printed),
                without_timings(&shown),
                "{doc}: `copper {}` prints other output than the example shows",
                args.join(" ")
            );
        }
    }
}

#[test]
fn durations_are_masked() {
    assert_eq!(
        without_timings("  searched in 151 ms (2 candidates)\n1 kernel: 0.15 s\n"),
        "  searched in <t> (2 candidates)\n1 kernel: <t>\n"
    );
}

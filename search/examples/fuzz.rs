//! Fuzzing harness for the `copper` binary, run on demand, never
//! by `cargo test`:
//!
//! ```text
//! cargo build --release
//! cargo run --release -p copper-search --example fuzz -- --cases 10000 --jobs 2
//! ```
//!
//! Each case takes one `testdata/*.cu` and its `X.toml`, mutates them
//! (token ranges deleted, duplicated or swapped; deep nesting, huge
//! numbers, random bytes and macro bombs inserted; parameter values and
//! lines broken) and runs every command on them (`parse`, `analyze`,
//! `lint`, `simulate`, `optimize --diff`, `params`) with a per-command
//! timeout. It counts panics (exit 101), aborts (killed by a signal, or
//! 134) and hangs (the timeout), and saves each such input under
//! `--found DIR` with the command and the end of its stderr. A case is a
//! function of `--seed` and its number alone: `--first N --cases 1`
//! replays case N.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The commands each case runs.
const COMMANDS: &[&[&str]] = &[
    &["parse"],
    &["analyze"],
    &["lint"],
    &["simulate"],
    &["optimize", "--diff"],
    &["params"],
];

/// Settings from the command line.
struct Options {
    cases: u64,
    first: u64,
    seed: u64,
    jobs: usize,
    timeout: Duration,
    bin: PathBuf,
    found: PathBuf,
}

fn main() {
    let opts = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fuzz: {e}");
            std::process::exit(2);
        }
    };
    let corpus = corpus(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata")
            .as_path(),
    );
    if corpus.is_empty() {
        eprintln!("fuzz: no testdata/*.cu found");
        std::process::exit(2);
    }
    let _ = std::fs::create_dir_all(&opts.found);
    let next = AtomicU64::new(opts.first);
    let tally = Mutex::new(Tally::default());
    let start = Instant::now();
    std::thread::scope(|s| {
        for job in 0..opts.jobs {
            let (opts, corpus, next, tally) = (&opts, &corpus, &next, &tally);
            s.spawn(move || {
                // Each worker's cases in a folder of its own, removed at
                // the end.
                let scratch = match tempfile::tempdir() {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("fuzz: no scratch folder for worker {job}: {e}");
                        return;
                    }
                };
                let dir = scratch.path().join("case");
                loop {
                    let case = next.fetch_add(1, Ordering::SeqCst);
                    if case >= opts.first + opts.cases {
                        break;
                    }
                    let found = run_case(opts, corpus, case, &dir);
                    let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                    t.add(&found);
                    if t.cases % 100 == 0 {
                        eprintln!("{} after {:.0?}", t.line(), start.elapsed());
                    }
                }
            });
        }
    });
    let t = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "{} in {:.0?} (seed {})",
        t.line(),
        start.elapsed(),
        opts.seed
    );
    if t.panics + t.aborts + t.hangs > 0 {
        println!("inputs saved under {}", opts.found.display());
        std::process::exit(1);
    }
}

/// Parses the command line.
fn options() -> Result<Options, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut o = Options {
        cases: 1000,
        first: 0,
        seed: 1,
        jobs: 1,
        timeout: Duration::from_secs(30),
        bin: root.join("target/release/copper"),
        found: root.join("target/fuzz-found"),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--cases" => o.cases = number()?,
            "--first" => o.first = number()?,
            "--seed" => o.seed = number()?,
            "--jobs" => o.jobs = number()?.max(1) as usize,
            "--timeout" => o.timeout = Duration::from_secs(number()?),
            "--bin" => o.bin = PathBuf::from(value),
            "--found" => o.found = PathBuf::from(value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(o)
}

/// A source and its parameter file.
struct Seed {
    name: String,
    cu: Vec<u8>,
    toml: Vec<u8>,
}

/// Every `testdata/*.cu` with its `.toml` (empty when it has none).
fn corpus(dir: &Path) -> Vec<Seed> {
    let mut seeds: Vec<Seed> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .filter_map(|p| {
            Some(Seed {
                name: p.file_stem()?.to_string_lossy().into_owned(),
                cu: std::fs::read(&p).ok()?,
                toml: std::fs::read(p.with_extension("toml")).unwrap_or_default(),
            })
        })
        .collect();
    seeds.sort_by(|a, b| a.name.cmp(&b.name));
    seeds
}

/// What went wrong in one run.
enum Found {
    Panic,
    Abort,
    Hang,
}

/// Counts over the cases run.
#[derive(Default)]
struct Tally {
    cases: u64,
    runs: u64,
    panics: u64,
    aborts: u64,
    hangs: u64,
}

impl Tally {
    fn add(&mut self, found: &[Found]) {
        self.cases += 1;
        self.runs += COMMANDS.len() as u64;
        for f in found {
            match f {
                Found::Panic => self.panics += 1,
                Found::Abort => self.aborts += 1,
                Found::Hang => self.hangs += 1,
            }
        }
    }

    fn line(&self) -> String {
        format!(
            "{} cases, {} runs: {} panics, {} aborts, {} hangs",
            self.cases, self.runs, self.panics, self.aborts, self.hangs
        )
    }
}

/// Builds case `case` in `dir` and runs every command on it.
fn run_case(opts: &Options, corpus: &[Seed], case: u64, dir: &Path) -> Vec<Found> {
    let mut rng = Rng::new(opts.seed, case);
    let seed = &corpus[rng.below(corpus.len() as u64) as usize];
    let cu = mutate_source(&mut rng, &seed.cu);
    let toml = if rng.below(3) == 0 {
        mutate_params(&mut rng, &seed.toml)
    } else {
        seed.toml.clone()
    };
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::create_dir_all(dir).is_err()
        || std::fs::write(dir.join("k.cu"), &cu).is_err()
        || std::fs::write(dir.join("k.toml"), &toml).is_err()
    {
        eprintln!("fuzz: cannot write case {case} under {}", dir.display());
        return Vec::new();
    }
    let mut found = Vec::new();
    for cmd in COMMANDS {
        let Some((f, stderr)) = run_one(opts, dir, cmd) else {
            continue;
        };
        let what = match f {
            Found::Panic => "panic",
            Found::Abort => "abort",
            Found::Hang => "hang",
        };
        let stem = opts
            .found
            .join(format!("case{case}-{}-{}-{what}", seed.name, cmd[0]));
        let _ = std::fs::write(stem.with_extension("cu"), &cu);
        let _ = std::fs::write(stem.with_extension("toml"), &toml);
        let _ = std::fs::write(
            stem.with_extension("txt"),
            format!("copper {} k.cu\n{stderr}", cmd.join(" ")),
        );
        eprintln!("case {case} ({}): {what} in `{}`", seed.name, cmd.join(" "));
        found.push(f);
    }
    found
}

/// Runs `copper CMD k.cu` in `dir`; what went wrong, with the end of its
/// stderr, or `None` when it ended by itself with 0, 1 or 2.
fn run_one(opts: &Options, dir: &Path, cmd: &[&str]) -> Option<(Found, String)> {
    let mut child = Command::new(&opts.bin)
        .args(cmd)
        .arg("k.cu")
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut pipe = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = pipe.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + opts.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let err = reader.join().unwrap_or_default();
    let tail = String::from_utf8_lossy(&err[err.len().saturating_sub(4000)..]).into_owned();
    let found = match status {
        None => Found::Hang,
        Some(s) => match s.code() {
            Some(0..=2) => return None,
            Some(101) => Found::Panic,
            _ => Found::Abort,
        },
    };
    Some((found, tail))
}

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Splits `src` into tokens: runs of identifier characters, of white
/// space, or single other bytes.
fn tokens(src: &[u8]) -> Vec<&[u8]> {
    let class = |b: u8| {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            0
        } else if b.is_ascii_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=src.len() {
        if i == src.len() || class(src[i]) == 2 || class(src[i]) != class(src[start]) {
            out.push(&src[start..i]);
            start = i;
        }
    }
    out
}

/// Numbers that overflow, wrap or divide badly.
const HUGE: &[&str] = &[
    "99999999999999999999999999",
    "2147483648",
    "-2147483648",
    "4294967295u",
    "0x7fffffffffffffff",
    "18446744073709551616",
    "1e400",
    "0",
    "-1",
    "1u << 63",
    "(-2147483647-1)",
];

/// One to four mutations of a source file.
fn mutate_source(rng: &mut Rng, src: &[u8]) -> Vec<u8> {
    let mut toks: Vec<Vec<u8>> = tokens(src).into_iter().map(<[u8]>::to_vec).collect();
    for _ in 0..=rng.below(4) {
        let n = toks.len() as u64;
        let at = rng.below(n + 1) as usize;
        let span = 1 + rng.below(40);
        let len = (1 + rng.below(span)) as usize;
        let end = (at + len).min(toks.len());
        match rng.below(9) {
            0 => {
                toks.drain(at..end);
            }
            1 => {
                let copy: Vec<Vec<u8>> = toks[at..end].to_vec();
                let to = rng.below(toks.len() as u64 + 1) as usize;
                toks.splice(to..to, copy);
            }
            2 => {
                let other = rng.below(n.saturating_sub(len as u64) + 1) as usize;
                let o_end = (other + len).min(toks.len());
                if o_end <= at || end <= other {
                    let a: Vec<Vec<u8>> = toks[at..end].to_vec();
                    let b: Vec<Vec<u8>> = toks[other..o_end].to_vec();
                    let (first, second) = if at < other { (a, b) } else { (b, a) };
                    let (lo, lo_end, hi, hi_end) = if at < other {
                        (at, end, other, o_end)
                    } else {
                        (other, o_end, at, end)
                    };
                    toks.splice(hi..hi_end, first);
                    toks.splice(lo..lo_end, second);
                }
            }
            3 => {
                let depth = 1 + rng.below(3000) as usize;
                let (open, close): (&[u8], &[u8]) = *rng.pick(&[
                    (&b"{"[..], &b"}"[..]),
                    (b"(", b")"),
                    (b"if (x) {", b"}"),
                    (b"for (int i = 0; i < n; i++) {", b"}"),
                    (b"-", b""),
                    (b"[", b"]"),
                ]);
                let mut nest = open.repeat(depth);
                nest.extend(b" x ");
                nest.extend(close.repeat(depth));
                toks.insert(at, nest);
            }
            4 | 5 => {
                let nums: Vec<usize> = (0..toks.len())
                    .filter(|&i| toks[i].first().is_some_and(u8::is_ascii_digit))
                    .collect();
                if !nums.is_empty() {
                    let i = *rng.pick(&nums);
                    toks[i] = rng.pick(HUGE).as_bytes().to_vec();
                }
            }
            6 => {
                let bytes: Vec<u8> = (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect();
                toks.insert(at, bytes);
            }
            7 => {
                let width = 2 + rng.below(3);
                let levels = 10 + rng.below(30);
                let mut bomb = String::from("\n#define M0 x\n");
                for l in 1..=levels {
                    let body = vec![format!("M{}", l - 1); width as usize].join(" + ");
                    bomb.push_str(&format!("#define M{l} ({body})\n"));
                }
                toks.insert(0, bomb.into_bytes());
                let idents: Vec<usize> = (0..toks.len())
                    .filter(|&i| toks[i].first().is_some_and(u8::is_ascii_alphabetic))
                    .collect();
                if !idents.is_empty() {
                    let i = *rng.pick(&idents);
                    toks[i] = format!("M{levels}").into_bytes();
                }
            }
            _ => {
                if !toks.is_empty() {
                    let t = rng.pick(&toks).clone();
                    toks.insert(at, t);
                }
            }
        }
    }
    toks.concat()
}

/// One to three mutations of a parameter file, by line.
fn mutate_params(rng: &mut Rng, toml: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = toml.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    for _ in 0..=rng.below(3) {
        let i = rng.below(lines.len() as u64) as usize;
        match rng.below(5) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 | 3 => {
                // A value replaced by an extreme one.
                if let Some(eq) = lines[i].iter().position(|&b| b == b'=') {
                    const VALUES: &[&str] = &[
                        "0",
                        "-1",
                        "4294967296",
                        "9223372036854775807",
                        "-9223372036854775808",
                        "1e308",
                        "nan",
                        "[0, 0, 0]",
                        "[65536, 65536, 65536]",
                        "[1024, 1024, 64]",
                        "\"random\"",
                        "\"\"",
                        "[]",
                        "{}",
                    ];
                    let value = *rng.pick(VALUES);
                    lines[i].truncate(eq + 1);
                    lines[i].extend(b" ");
                    lines[i].extend(value.as_bytes());
                }
            }
            _ => {
                let bytes: Vec<u8> = (0..1 + rng.below(12)).map(|_| rng.next() as u8).collect();
                lines.insert(i, bytes);
            }
        }
        if lines.is_empty() {
            break;
        }
    }
    lines.join(&b'\n')
}

//! A small W3C WebDriver client for the browser tests: starts
//! `chromedriver` on a free local port, opens a headless Chromium session,
//! and speaks JSON over plain HTTP/1.1 (one connection per request), with
//! no crate beyond `serde_json`.
//!
//! Chromium and ChromeDriver come from Debian's `chromium` and
//! `chromium-driver` packages (`.ci/run` installs them); `COPPER_CHROMIUM`
//! and `COPPER_CHROMEDRIVER` name other binaries.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A running `chromedriver`, stopped when dropped.
pub struct Driver {
    child: Child,
    port: u16,
}

/// One browser session, closed when dropped.
pub struct Session<'d> {
    driver: &'d Driver,
    id: String,
}

/// The binary named by `var`, else the first of `paths` that exists.
fn binary(var: &str, paths: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    paths.iter().map(PathBuf::from).find(|p| p.exists())
}

impl Driver {
    /// Starts `chromedriver`; `Ok(None)` when it or Chromium is not
    /// installed.
    pub fn start() -> Result<Option<(Driver, PathBuf)>, String> {
        let (Some(driver), Some(browser)) = (
            binary(
                "COPPER_CHROMEDRIVER",
                &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
            ),
            binary(
                "COPPER_CHROMIUM",
                &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
            ),
        ) else {
            return Ok(None);
        };
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", driver.display()))?;
        let d = Driver { child, port };
        let start = Instant::now();
        loop {
            if let Ok(status) = d.request("GET", "/status", None) {
                if status["value"]["ready"] == json!(true) {
                    return Ok(Some((d, browser)));
                }
            }
            if start.elapsed() > Duration::from_secs(20) {
                return Err("chromedriver did not become ready in 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A headless session of `browser`, its profile in `profile`.
    pub fn session(&self, browser: &Path, profile: &Path) -> Result<Session<'_>, String> {
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,900",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile.display())])
        .collect::<Vec<_>>();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": browser.display().to_string(), "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let v = self.request("POST", "/session", Some(&caps))?;
        let id = v["value"]["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session: {v}"))?
            .to_string();
        Ok(Session { driver: self, id })
    }

    /// One request; the response's JSON, or why there is none (an HTTP
    /// error status included).
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        );
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body.as_bytes()))
            .map_err(|e| e.to_string())?;
        let (head, body) = response(&mut stream)?;
        let value: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        let status = head.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            return Err(format!("{method} {path}: HTTP {status}: {value}"));
        }
        Ok(value)
    }
}

/// The head and body of the HTTP response on `stream`: the body is read
/// to its `Content-Length` (chromedriver keeps the connection open).
fn response(stream: &mut TcpStream) -> Result<(String, String), String> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let mut need: Option<usize> = None;
    loop {
        if let Some(end) = find(&raw, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_string();
            let len = match need {
                Some(n) => n,
                None => {
                    let n = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.trim()
                                .eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .ok_or_else(|| format!("no Content-Length: {head}"))?;
                    need = Some(n);
                    n
                }
            };
            if raw.len() >= end + 4 + len {
                let body = String::from_utf8_lossy(&raw[end + 4..end + 4 + len]).to_string();
                return Ok((head, body));
            }
        }
        let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!(
                "connection closed: {}",
                String::from_utf8_lossy(&raw)
            ));
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

/// Where `needle` first starts in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Session<'_> {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let path = format!("/session/{}{path}", self.id);
        let v = self.driver.request(method, &path, body.as_ref())?;
        Ok(v["value"].clone())
    }

    /// Opens `url`.
    pub fn open(&self, url: &str) -> Result<(), String> {
        self.call("POST", "/url", Some(json!({ "url": url })))
            .map(drop)
    }

    /// Runs `script` (a function body) in the page; its return value.
    pub fn run(&self, script: &str) -> Result<Value, String> {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// The elements matching the CSS `selector`, as element references.
    pub fn find_all(&self, selector: &str) -> Result<Vec<Value>, String> {
        let v = self.call(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": selector})),
        )?;
        Ok(v.as_array().cloned().unwrap_or_default())
    }

    /// Clicks `element` (a reference [`Session::find_all`] returned), as a
    /// user does: scrolled into view, at its centre.
    pub fn click(&self, element: &Value) -> Result<(), String> {
        let id = element
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .ok_or("not an element")?;
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})))
            .map(drop)
    }

    /// The browser console's entries since the last call.
    pub fn console(&self) -> Result<Vec<Value>, String> {
        let v = self.call("POST", "/se/log", Some(json!({"type": "browser"})))?;
        Ok(v.as_array().cloned().unwrap_or_default())
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self.call("DELETE", "", None);
    }
}

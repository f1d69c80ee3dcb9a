//! What the benchmarks read off the command line and `/proc`, in one place. Included by path
//! (`#[path = "common/proc.rs"] mod proc;`) so each benchmark stays one binary; a folder
//! without `main.rs` under `src/bin` is not a binary of its own.
#![allow(dead_code)] // each benchmark uses the part it needs

/// The value after `name` on the command line (`--gib 1` → `Some("1")`).
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A memory field of a process's `/proc/{pid}/status` in kB (`VmRSS`, `VmHWM`); 0 when gone.
pub fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

//! Admission control: how much media work this node takes on at once, and what it says when
//! it is full.
//!
//! An identification first reads its upload to disk, holding only an upload place
//! ([`Admission::reading`]: at most `uploads` being read on the node, at most
//! `uploads_per_address` of them from one client address), so that a client sending slowly
//! holds no place of the media work. A node that is already full refuses at once, before
//! reading anything ([`Admission::has_room`]). With the upload on disk, the request is
//! admitted ([`Admission::enter`]): when the node already holds `jobs + queue` of them, the
//! answer is 503 with `Retry-After`. An admitted request waits (at most `queue_wait`) for a
//! job slot and for its share of the decode-memory budget ([`Ticket::start`]): a still
//! weighs what its decoded pixels weigh, a clip what its decoders may take. Library
//! searches (all cores, memory-mapped index) have their own small gate ([`Admission::library`]).
//!
//! These are limits of one node, on purpose: they protect this machine's CPU and memory, so
//! each node counts its own work. (Per-person limits, which must hold across nodes, live in
//! the database: see `guard`.)
//!
//! [`Admission::shutdown`] is the root of every request's cancel token: when the server is
//! asked to stop, all media work stops with it.
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::AdmissionConfig;
/// The SPEC's words for a 5xx (section 8), with what to do.
pub const BUSY: &str = "Server temporarily unavailable: too many identifications are running right now. \
Please try again in a few seconds.";
pub const STOPPING: &str = "Server temporarily unavailable: the server is restarting. Please try again in a moment.";
pub const PREVIEWS_BUSY: &str =
    "Server temporarily unavailable: too many previews are being made. Please try again in a moment.";

/// Why this node did not take the work on. The route answers 503 with `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Every place is taken; come back in `retry_after` seconds.
    #[error("{BUSY}")]
    Busy { retry_after: u64 },
    /// The server is shutting down.
    #[error("{STOPPING}")]
    Stopping,
    /// No slot to cut a Library preview came in time.
    #[error("{PREVIEWS_BUSY}")]
    PreviewsBusy,
    /// This client address already has as many uploads being read as it may (429).
    #[error("{TOO_MANY_UPLOADS}")]
    UploadsPerAddress,
}

/// The SPEC's words for a 429 (section 8), with the reason.
pub const TOO_MANY_UPLOADS: &str =
    "Too many requests. Please wait a moment before trying again: your earlier uploads are still being received.";

impl Refused {
    /// Seconds the client should wait before trying again.
    pub fn retry_after(self) -> u64 {
        match self {
            Self::Busy { retry_after } => retry_after,
            Self::Stopping => 5,
            Self::PreviewsBusy => 2,
            Self::UploadsPerAddress => 5,
        }
    }
}

/// Preview pictures cut at once (one short ffmpeg each), and how long a request waits for a slot.
const PREVIEW_CUTS: usize = 2;
const PREVIEW_WAIT: Duration = Duration::from_secs(5);

pub struct Admission {
    /// Cancelled when the server shuts down; every request's token is a child of it.
    pub shutdown: CancellationToken,
    jobs: Arc<Semaphore>,
    memory: Arc<Semaphore>,
    memory_mb: u32,
    library: Arc<Semaphore>,
    previews: Arc<Semaphore>,
    /// Admitted requests that have not finished their media step.
    inflight: AtomicUsize,
    capacity: usize,
    job_slots: usize,
    queue_wait: Duration,
    /// Moving average of a media job's length, for `Retry-After`.
    avg_job_ms: AtomicU64,
    /// Uploads being read, in all and per client address (IPv6 by its /64).
    reading: Mutex<Reading>,
    uploads: usize,
    uploads_per_address: usize,
}

#[derive(Default)]
struct Reading {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

impl Admission {
    pub fn new(config: &AdmissionConfig) -> Arc<Self> {
        Arc::new(Self {
            shutdown: CancellationToken::new(),
            jobs: Arc::new(Semaphore::new(config.jobs)),
            memory: Arc::new(Semaphore::new(config.memory_mb as usize)),
            memory_mb: config.memory_mb,
            library: Arc::new(Semaphore::new(config.library_searches)),
            previews: Arc::new(Semaphore::new(PREVIEW_CUTS)),
            inflight: AtomicUsize::new(0),
            capacity: config.jobs + config.queue,
            job_slots: config.jobs,
            queue_wait: config.queue_wait,
            avg_job_ms: AtomicU64::new(2000),
            reading: Mutex::new(Reading::default()),
            uploads: config.uploads.max(1),
            uploads_per_address: config.uploads_per_address.max(1),
        })
    }

    /// Whether an identification arriving now could be admitted: a full node refuses at
    /// once, without reading the upload it could not take anyway.
    pub fn has_room(&self) -> Result<(), Refused> {
        if self.shutdown.is_cancelled() {
            return Err(Refused::Stopping);
        }
        if self.inflight.load(Ordering::Relaxed) >= self.capacity {
            return Err(self.busy());
        }
        Ok(())
    }

    /// A place to read one upload from `addr`: 503 when the node reads as many as it may,
    /// 429 when this address already sends as many as it may. Held until dropped.
    pub fn reading(self: &Arc<Self>, addr: Option<IpAddr>) -> Result<UploadPlace, Refused> {
        let key = addr.map(address_key);
        let mut r = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        if r.total >= self.uploads {
            return Err(self.busy());
        }
        if let Some(k) = key {
            let n = r.by_address.entry(k).or_default();
            if *n >= self.uploads_per_address {
                return Err(Refused::UploadsPerAddress);
            }
            *n += 1;
        }
        r.total += 1;
        Ok(UploadPlace { admission: self.clone(), key })
    }

    /// Uploads being read now (for tests and the log).
    pub fn uploads_reading(&self) -> usize {
        self.reading.lock().map(|r| r.total).unwrap_or(0)
    }

    /// Seconds a refused client should wait: the queue ahead of it at the average pace.
    pub fn retry_after(&self) -> u64 {
        let waiting = self.inflight.load(Ordering::Relaxed) as u64;
        let avg = self.avg_job_ms.load(Ordering::Relaxed).max(100);
        ((avg * (waiting / self.job_slots.max(1) as u64 + 1)).div_ceil(1000)).clamp(1, 60)
    }

    pub fn busy(&self) -> Refused {
        Refused::Busy { retry_after: self.retry_after() }
    }

    /// Admits one identification, or refuses it at once (503) when the node is full or
    /// stopping. Call before reading the body.
    pub fn enter(self: &Arc<Self>) -> Result<Ticket, Refused> {
        if self.shutdown.is_cancelled() {
            return Err(Refused::Stopping);
        }
        let mut now = self.inflight.load(Ordering::Relaxed);
        loop {
            if now >= self.capacity {
                return Err(self.busy());
            }
            match self.inflight.compare_exchange_weak(now, now + 1, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Ok(Ticket { admission: self.clone(), done: false }),
                Err(actual) => now = actual,
            }
        }
    }

    /// Waits for a slot to search the Library, until `deadline`.
    pub async fn library(&self, deadline: Instant) -> Option<OwnedSemaphorePermit> {
        tokio::time::timeout_at(deadline, self.library.clone().acquire_owned()).await.ok()?.ok()
    }

    /// Waits (a few seconds at most) for a slot to cut a Library preview; 503 when none comes.
    pub async fn preview(&self) -> Result<OwnedSemaphorePermit, Refused> {
        match tokio::time::timeout(PREVIEW_WAIT, self.previews.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok(p),
            _ => Err(Refused::PreviewsBusy),
        }
    }

    /// Requests admitted and not through their media step (for tests and the log).
    pub fn inflight(&self) -> usize {
        self.inflight.load(Ordering::Relaxed)
    }

    /// The decode-memory budget in MB: no single job may weigh more.
    pub fn memory_budget_mb(&self) -> u32 {
        self.memory_mb
    }
}

/// An address as the per-address limits count it: IPv4 whole, IPv6 by its /64 (one
/// customer's network).
fn address_key(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V4(_) => addr,
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
    }
}

/// A place to read one upload; given back when dropped.
pub struct UploadPlace {
    admission: Arc<Admission>,
    key: Option<IpAddr>,
}

impl Drop for UploadPlace {
    fn drop(&mut self) {
        let mut r = self.admission.reading.lock().unwrap_or_else(|e| e.into_inner());
        r.total = r.total.saturating_sub(1);
        if let Some(k) = self.key
            && let Some(n) = r.by_address.get_mut(&k)
        {
            *n -= 1;
            if *n == 0 {
                r.by_address.remove(&k);
            }
        }
    }
}

/// One admitted request. Dropping it (or [`Ticket::finish`]) gives its place back.
pub struct Ticket {
    admission: Arc<Admission>,
    done: bool,
}

/// A running media job: a job slot and `weight` MB of the memory budget.
pub struct JobPermit {
    _job: OwnedSemaphorePermit,
    _memory: OwnedSemaphorePermit,
    admission: Arc<Admission>,
    started: Instant,
}

impl Ticket {
    /// Waits for a job slot and `weight_mb` of decode memory (clamped to the budget). 503
    /// when they do not come within the queue wait; `Err(stopping)` on cancellation.
    pub async fn start(&self, weight_mb: u32, cancel: &CancellationToken) -> Result<JobPermit, Refused> {
        let a = &self.admission;
        let weight = weight_mb.clamp(1, a.memory_mb);
        let limit = Instant::now() + a.queue_wait;
        let acquire = async {
            let job = a.jobs.clone().acquire_owned().await.ok()?;
            let memory = a.memory.clone().acquire_many_owned(weight).await.ok()?;
            Some((job, memory))
        };
        tokio::select! {
            got = tokio::time::timeout_at(limit, acquire) => match got {
                Ok(Some((job, memory))) => Ok(JobPermit { _job: job, _memory: memory, admission: a.clone(), started: Instant::now() }),
                _ => Err(a.busy()),
            },
            _ = cancel.cancelled() => Err(Refused::Stopping),
        }
    }

    /// The media step is over: the place goes to the next request.
    pub fn finish(mut self) {
        self.release();
    }

    fn release(&mut self) {
        if !self.done {
            self.done = true;
            self.admission.inflight.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.release();
    }
}

impl Drop for JobPermit {
    fn drop(&mut self) {
        let ms = self.started.elapsed().as_millis() as u64;
        let avg = self.admission.avg_job_ms.load(Ordering::Relaxed);
        self.admission.avg_job_ms.store((avg * 7 + ms) / 8, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(jobs: usize, queue: usize) -> AdmissionConfig {
        AdmissionConfig {
            jobs,
            queue,
            memory_mb: 100,
            library_searches: 1,
            queue_wait: Duration::from_millis(200),
            shutdown_grace: Duration::from_secs(1),
            uploads: 3,
            uploads_per_address: 2,
        }
    }

    #[test]
    fn uploads_are_read_a_few_per_address_and_a_bounded_number_in_all() {
        let a = Admission::new(&config(1, 1));
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::2:3".parse().unwrap();
        let p1 = a.reading(Some(one)).unwrap();
        let _p2 = a.reading(Some(one)).unwrap();
        assert_eq!(a.reading(Some(one)).err(), Some(Refused::UploadsPerAddress));
        let _p3 = a.reading(Some(v6a)).unwrap();
        // The node's own bound comes first: 503, whoever asks.
        assert!(matches!(a.reading(Some(v6b)).err(), Some(Refused::Busy { .. })));
        drop(p1);
        // One /64 is one address: the second IPv6 address shares the first one's count.
        let _p4 = a.reading(Some(v6b)).unwrap();
        assert_eq!(a.uploads_reading(), 3);
        drop(_p4);
        drop(_p3);
        // Places come back: the /64 may send two again.
        let _q1 = a.reading(Some(v6b)).unwrap();
        let _q2 = a.reading(Some(v6a)).unwrap();
        assert_eq!(a.uploads_reading(), 3);
    }

    #[tokio::test]
    async fn full_means_503_with_retry_after_and_places_come_back() {
        let a = Admission::new(&config(1, 1));
        let t1 = a.enter().unwrap();
        let t2 = a.enter().unwrap();
        let refused = a.enter().err().unwrap();
        assert!(refused.to_string().starts_with("Server temporarily unavailable"));
        assert!(matches!(refused, Refused::Busy { retry_after: 1..=60 }));
        drop(t1);
        let t3 = a.enter().unwrap();
        t2.finish();
        assert_eq!(a.inflight(), 1);
        drop(t3);
        assert_eq!(a.inflight(), 0);
    }

    #[tokio::test]
    async fn jobs_wait_for_a_slot_and_memory_then_give_up() {
        let a = Admission::new(&config(2, 4));
        let cancel = CancellationToken::new();
        let t1 = a.enter().unwrap();
        let t2 = a.enter().unwrap();
        let big = t1.start(90, &cancel).await.unwrap();
        // A slot is free, but not 20 MB of the 100 MB budget: it waits, then is refused.
        assert!(matches!(t2.start(20, &cancel).await.err().unwrap(), Refused::Busy { .. }));
        drop(big);
        let _ok = t2.start(20, &cancel).await.unwrap();
        // Shutdown stops a waiting job at once.
        let t3 = a.enter().unwrap();
        let _slot2 = a.enter().unwrap().start(1, &cancel).await.unwrap();
        cancel.cancel();
        assert_eq!(t3.start(1, &cancel).await.err().unwrap(), Refused::Stopping);
    }
}

//! A small tokio runtime of a client's own, for clients the Library calls from blocking code
//! (the Milvus client, the shared catalog): a call runs there and the caller waits on a plain
//! channel, so a caller on an async thread does not panic (as `block_on` would) and a busy
//! application runtime cannot starve the call; the client's sockets belong to this runtime.
use std::future::Future;

/// One worker thread, named for its client; let go without waiting when dropped.
pub struct Runtime {
    /// `Some` until dropped (see the `Drop` below).
    inner: Option<tokio::runtime::Runtime>,
}

impl Runtime {
    pub fn new(thread_name: &str) -> std::io::Result<Self> {
        let inner = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(thread_name)
            .enable_all()
            .build()?;
        Ok(Self { inner: Some(inner) })
    }

    /// Runs `fut` on this runtime and waits for its output; `None` if the runtime stopped
    /// before it finished.
    pub fn wait<T: Send + 'static>(&self, fut: impl Future<Output = T> + Send + 'static) -> Option<T> {
        let runtime = self.inner.as_ref()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().ok()
    }
}

impl Drop for Runtime {
    /// Lets the runtime go without waiting for it: dropping a runtime blocks, which panics
    /// when the last owner goes away on an async thread (a server's state at the end of a
    /// test, say).
    fn drop(&mut self) {
        if let Some(runtime) = self.inner.take() {
            runtime.shutdown_background();
        }
    }
}

/**
 * The footer animates once, when 10% of it becomes visible (SPEC "Layout"): not tied to the
 * scroll position and never in reverse. CSS in app.css (`.footer-await`, `.footer-in`).
 *
 * Nothing happens with reduced motion (system setting or the stored animation level), without
 * IntersectionObserver, or when the footer is already on screen when the page starts (a
 * short page: hiding it first would only make it blink). The observer's first report says
 * where the footer is, so the page is never made to lay itself out early for this.
 */

export const FOOTER_THRESHOLD = 0.1;

export function animateFooterOnce(footer: HTMLElement | null, doc: Document = document): () => void {
  const win = doc.defaultView;
  if (!footer || !win || !("IntersectionObserver" in win)) return () => {};
  if (doc.documentElement.dataset.motion !== "full") return () => {};
  let first = true;
  const observer = new win.IntersectionObserver(
    (entries) => {
      const seen = entries.some((e) => e.isIntersecting && e.intersectionRatio >= FOOTER_THRESHOLD * 0.99);
      if (first) {
        first = false;
        // On screen from the start: it stays as it is.
        if (seen) observer.disconnect();
        else footer.classList.add("footer-await");
        return;
      }
      if (!seen) return;
      observer.disconnect();
      footer.classList.remove("footer-await");
      footer.classList.add("footer-in");
    },
    { threshold: FOOTER_THRESHOLD },
  );
  observer.observe(footer);
  return () => {
    observer.disconnect();
    footer.classList.remove("footer-await");
  };
}

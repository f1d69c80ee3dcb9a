/**
 * A modal dialog for the identification islands: a native <dialog> opened with
 * showModal() (the rest of the page becomes inert), focus trapped inside with focus-trap,
 * Escape closes, focus goes back to what opened it. focus-trap (about 7 KB) is fetched when a
 * dialog first opens, not with the page: the native modal dialog already keeps focus
 * inside until then.
 */
import type { FocusTrap } from "focus-trap";
import { useEffect, useId, useRef, type ReactNode } from "react";

export interface ModalProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  /** Hide the title visually (it still names the dialog). */
  hideTitle?: boolean;
  description?: ReactNode;
  children?: ReactNode;
  className?: string;
  /** Where focus starts; default the first focusable element. */
  initialFocus?: () => HTMLElement | null;
  /** Escape does nothing while this is true (e.g. a pending request). */
  busy?: boolean;
}

export function Modal({ open, onClose, title, hideTitle, description, children, className, initialFocus, busy }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const trapRef = useRef<FocusTrap | null>(null);
  const onCloseRef = useRef(onClose);
  const busyRef = useRef(busy);
  onCloseRef.current = onClose;
  busyRef.current = busy;
  const titleId = useId();
  const descId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog || !open) return;
    const opener = document.activeElement as HTMLElement | null;
    if (typeof dialog.showModal === "function") {
      if (!dialog.open) dialog.showModal();
    } else {
      dialog.setAttribute("open", "");
    }
    document.documentElement.classList.add("has-open-dialog");
    initialFocus?.()?.focus();
    let closed = false;
    void import("focus-trap")
      .then(({ createFocusTrap }) => {
        if (closed || !dialog.open) return;
        const trap = createFocusTrap(dialog, {
          escapeDeactivates: false,
          allowOutsideClick: true,
          returnFocusOnDeactivate: false,
          fallbackFocus: dialog,
          initialFocus: () => initialFocus?.() ?? (dialog.contains(document.activeElement) ? (document.activeElement as HTMLElement) : undefined),
        });
        trap.activate();
        trapRef.current = trap;
      })
      .catch(() => {
        /* nothing focusable yet (tests), or the chunk failed: the native dialog keeps focus */
      });
    return () => {
      closed = true;
      trapRef.current?.deactivate();
      trapRef.current = null;
      if (dialog.open && typeof dialog.close === "function") dialog.close();
      else dialog.removeAttribute("open");
      document.documentElement.classList.remove("has-open-dialog");
      if (opener && document.contains(opener)) opener.focus();
    };
    // initialFocus is read once when opening.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    // The browser's own Escape handling closes a modal dialog; route it through onClose.
    const onCancel = (e: Event) => {
      e.preventDefault();
      if (!busyRef.current) onCloseRef.current();
    };
    dialog.addEventListener("cancel", onCancel);
    return () => dialog.removeEventListener("cancel", onCancel);
  }, []);

  return (
    <dialog
      ref={ref}
      className={`island-dialog id-dialog ${className ?? ""}`}
      aria-labelledby={titleId}
      aria-describedby={description ? descId : undefined}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          if (!busyRef.current) onCloseRef.current();
        }
      }}
      onClick={(e) => {
        // A click on the backdrop (the dialog element itself, outside its content box) closes it.
        if (e.target === ref.current && !busyRef.current) {
          const r = ref.current.getBoundingClientRect();
          const inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
          if (!inside) onCloseRef.current();
        }
      }}
    >
      {open && (
        <>
          <h2 id={titleId} className={hideTitle ? "id-sr-only" : "island-dialog-title"}>
            {title}
          </h2>
          {description && (
            <p id={descId} className="id-dialog-desc">
              {description}
            </p>
          )}
          {children}
        </>
      )}
    </dialog>
  );
}

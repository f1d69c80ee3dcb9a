/** React access to the shared toast store (see ./toast). */
import { useSyncExternalStore } from "react";
import { dismiss, getToasts, subscribeToasts, toast, type ToastItem } from "./toast";

export function useToast(): { toast: typeof toast; dismiss: typeof dismiss; toasts: readonly ToastItem[] } {
  const toasts = useSyncExternalStore(subscribeToasts, getToasts, getToasts);
  return { toast, dismiss, toasts };
}

export { toast, dismiss };

/**
 * Telling a signed-in person about achievements they just earned. The server decides what
 * is earned (from stored activity) and answers each achievement to one check only, so two
 * tabs never toast the same one. A check runs after an identification (`reelfind:identified`)
 * and after anything else that can earn one (`reelfind:achievement-check`: a saved title, a
 * review), and when the profile opens.
 *
 * The toast waits for the toast on screen to close (one at a time, SPEC section 4), so
 * "Added to Collection" is read before "Achievement unlocked" replaces it.
 */
import { postJson } from "./api";
import { getToasts, subscribeToasts, toast } from "./toast";
import type { Earned } from "../generated/Earned";

export const ACHIEVEMENT_CHECK_EVENT = "reelfind:achievement-check";

/** Asks other code on the page to check for achievements (the runtime listens). */
export function requestAchievementCheck(): void {
  window.dispatchEvent(new CustomEvent(ACHIEVEMENT_CHECK_EVENT));
}

/** The toast text for what was just earned (one toast, however many). */
export function achievementToast(earned: readonly Earned[]): { title: string; description: string } | null {
  if (earned.length === 0) return null;
  if (earned.length === 1) return { title: `Achievement unlocked: ${earned[0]!.title}`, description: earned[0]!.description };
  return { title: "Achievements unlocked", description: earned.map((e) => e.title).join(", ") };
}

function whenNoToastIsOpen(): Promise<void> {
  if (!getToasts().some((t) => t.open)) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = subscribeToasts((all) => {
      if (!all.some((t) => t.open)) {
        stop();
        resolve();
      }
    });
  });
}

let running: Promise<Earned[]> | null = null;

/** Checks once (calls made while one runs share it); toasts what is new; answers it. */
export function checkAchievements(): Promise<Earned[]> {
  running ??= postJson<Earned[]>("/api/profiles/me/achievements", {})
    .then(async (earned) => {
      const t = achievementToast(earned);
      if (t) {
        await whenNoToastIsOpen();
        toast({ ...t, duration: 6000 });
        window.dispatchEvent(new CustomEvent("reelfind:achievements-earned", { detail: earned }));
      }
      return earned;
    })
    .catch(() => [] as Earned[])
    .finally(() => {
      running = null;
    });
  return running;
}

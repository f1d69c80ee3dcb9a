/**
 * Sharing a result (SPEC section 8 "Share"): the native share sheet where the browser has
 * one (a person cancelling it is not an error), else the link copied to the clipboard.
 */
import { siteName } from "../lib/site";
import { toast } from "../lib/toast";

export function shareUrl(id: string, origin = location.origin): string {
  return `${origin}/shared/${encodeURIComponent(id)}`;
}

export type ShareOutcome = "shared" | "cancelled" | "copied" | "failed";

export async function shareResult(id: string, title: string): Promise<ShareOutcome> {
  const url = shareUrl(id);
  if (typeof navigator.share === "function") {
    try {
      await navigator.share({ title, text: `I identified ${title} with ${siteName()}`, url });
      return "shared";
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") return "cancelled";
      toast({
        title: "Share Failed",
        description: "Unable to share. Please try copying the link instead.",
        variant: "destructive",
      });
      return "failed";
    }
  }
  try {
    await navigator.clipboard.writeText(url);
    toast({ title: "Link Copied", description: "Shareable link has been copied to your clipboard." });
    return "copied";
  } catch {
    toast({ title: "Error", description: "Failed to copy link. Please try again.", variant: "destructive" });
    return "failed";
  }
}

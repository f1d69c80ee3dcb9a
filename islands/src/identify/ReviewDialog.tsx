/**
 * The review dialog "Share Your Experience" (SPEC "Result view", section 4 "Review
 * dialog", section 5 "Review"): a 1-5 star rating (default 5) and a text; posts to
 * POST /api/testimonials; closing it marks testimonial-completed-{id}.
 */
import { requestAchievementCheck } from "../lib/achievements";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { statusOf } from "../lib/api";
import { useQuery } from "@tanstack/react-query";
import { currentUserQuery } from "../lib/query";
import { siteName } from "../lib/site";
import { setItem, StorageKeys } from "../lib/storage";
import { useToast } from "../lib/useToast";
import { submitReview } from "./api";
import { Icon } from "./icons";
import { Modal } from "./Modal";

export const REVIEW_TEXTS = {
  required: { title: "Review required", description: "Please write a review before submitting" },
  signIn: { title: "Sign in required", description: "Please sign in to submit a review" },
  failed: "Failed to submit review",
  thanks: "Thank you for your review!",
} as const;

/** The check before sending: the SPEC toast to show, or null when the review may go. */
export function reviewProblem(review: string, signedIn: boolean): { title: string; description: string } | null {
  if (!review.trim()) return REVIEW_TEXTS.required;
  if (!signedIn) return REVIEW_TEXTS.signIn;
  return null;
}

export function ReviewDialog({
  open,
  onClose,
  identificationId,
  movieTitle,
}: {
  open: boolean;
  onClose: () => void;
  identificationId: string | null;
  movieTitle: string;
}) {
  const { toast } = useToast();
  // Asked only once the dialog opens: a guest page never calls /api/user otherwise.
  const user = useQuery({ ...currentUserQuery, enabled: open });
  const queryClient = useQueryClient();
  const [rating, setRating] = useState(5);
  const [review, setReview] = useState("");
  const [sending, setSending] = useState(false);
  // Shown inside the dialog too: a toast sits under a modal dialog's backdrop.
  const [problem, setProblem] = useState<string | null>(null);
  const textId = useId();
  const groupId = useId();

  const close = () => {
    setProblem(null);
    if (identificationId) setItem(StorageKeys.testimonialCompleted(identificationId), "true");
    onClose();
  };

  const submit = async () => {
    const found = reviewProblem(review, !!user.data);
    if (found) {
      setProblem(`${found.title} - ${found.description}`);
      toast({ ...found, variant: "destructive" });
      return;
    }
    setProblem(null);
    setSending(true);
    try {
      await submitReview({ rating, review: review.trim(), movieTitle, identificationId });
      // Reviews are moderated: say so, rather than let the writer look for it on the home page.
      toast({ title: REVIEW_TEXTS.thanks, description: "It will appear on the home page once a moderator approves it." });
      requestAchievementCheck();
      void queryClient.invalidateQueries({ queryKey: ["/api/testimonials/featured"] });
      setRating(5);
      setReview("");
      close();
    } catch (error) {
      const s = statusOf(error);
      if (s === 401) {
        setProblem(`${REVIEW_TEXTS.signIn.title} - ${REVIEW_TEXTS.signIn.description}`);
        toast({ ...REVIEW_TEXTS.signIn, variant: "destructive" });
      } else {
        setProblem(REVIEW_TEXTS.failed);
        toast({ title: "Error", description: REVIEW_TEXTS.failed, variant: "destructive" });
      }
    } finally {
      setSending(false);
    }
  };

  return (
    <Modal
      open={open}
      onClose={close}
      title="Share Your Experience"
      description={`How did ${siteName()} do with ${movieTitle}?`}
      busy={sending}
      className="id-review-dialog"
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <fieldset className="id-star-input" aria-describedby={groupId}>
          <legend>Your rating</legend>
          <span id={groupId} className="id-sr-only">
            {rating} of 5 stars
          </span>
          <div className="id-star-row">
          {[1, 2, 3, 4, 5].map((n) => (
            <label key={n} className={`id-star-choice ${n <= rating ? "is-on" : ""}`}>
              <input
                type="radio"
                name="rating"
                value={n}
                checked={rating === n}
                onChange={() => setRating(n)}
                className="id-sr-only"
              />
              <Icon name="star" size={28} />
              <span className="id-sr-only">
                {n} star{n > 1 ? "s" : ""}
              </span>
            </label>
          ))}
          </div>
        </fieldset>
        <label htmlFor={textId} className="id-label">
          Your review
        </label>
        <textarea
          id={textId}
          className="id-textarea"
          rows={4}
          maxLength={2000}
          value={review}
          onChange={(e) => setReview(e.target.value)}
          placeholder="Tell others how the identification went..."
        />
        {problem && (
          <p className="id-invalid id-review-problem" role="alert">
            {problem}
          </p>
        )}
        <div className="island-dialog-actions">
          <button type="button" className="btn btn-ghost" onClick={close} disabled={sending}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={sending} aria-busy={sending}>
            {sending ? "Submitting..." : "Submit Review"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

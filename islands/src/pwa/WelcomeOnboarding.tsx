/**
 * The welcome onboarding dialog shown after registration (SPEC "Auth screen" and section 4
 * "Onboarding"): welcome → benefits → (Enable) permission → success, or declined on a
 * failure, on Skip for Now, or when the browser has no push. On success a welcome test
 * notification follows after 2 s and the preferences are saved
 * (POST /api/user/notification-preferences). `onFinish` reports the outcome.
 */
import { useEffect, useReducer, useRef } from "react";
import { Modal } from "../identify/Modal";
import { logWarning } from "../lib/log";
import { enablePush, isPushSupported, pushErrorMessage, saveNotificationPreferences, sendTestNotification } from "./push";
import { onboardingNext, PUSH_TEXT, WELCOME_TEST_DELAY_MS, type OnboardingEvent, type OnboardingStep } from "./rules";

export type OnboardingOutcome = "enabled" | "failed" | "declined";

export interface WelcomeOnboardingProps {
  open: boolean;
  username: string;
  siteName: string;
  onFinish: (outcome: OnboardingOutcome) => void;
}

export const BENEFITS = [
  { title: "Instant Results", text: "Hear the moment something you asked about is ready." },
  { title: "Save Time", text: "Every identification waits in your history, one tap away." },
  { title: "New Features", text: "Be first to know when new engines and tools arrive." },
  { title: "Special Offers", text: "Get member offers before anyone else." },
] as const;

interface State {
  step: OnboardingStep;
  failure: string | null;
}

function reducer(s: State, a: { event: OnboardingEvent; failure?: string }): State {
  return { step: onboardingNext(s.step, a.event), failure: a.failure ?? s.failure };
}

export function WelcomeOnboarding({ open, username, siteName, onFinish }: WelcomeOnboardingProps) {
  const [{ step, failure }, dispatch] = useReducer(reducer, { step: "welcome", failure: null });
  const welcomeTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const welcomeSent = useRef<Promise<void> | null>(null);

  const sendWelcome = () => {
    welcomeSent.current ??= sendTestNotification("welcome").catch((e: unknown) => {
      logWarning(`Welcome notification failed: ${pushErrorMessage(e)}`, "pwa");
    });
    return welcomeSent.current;
  };

  useEffect(() => {
    if (step !== "success") return;
    welcomeTimer.current = setTimeout(() => void sendWelcome(), WELCOME_TEST_DELAY_MS);
    return () => {
      if (welcomeTimer.current) clearTimeout(welcomeTimer.current);
    };
    // sendWelcome only touches refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [step]);

  const enable = async () => {
    if (!isPushSupported()) {
      dispatch({ event: "unsupported", failure: PUSH_TEXT.unsupported });
      return;
    }
    dispatch({ event: "enable" });
    try {
      await enablePush();
      dispatch({ event: "granted" });
    } catch (error) {
      dispatch({ event: "failed", failure: pushErrorMessage(error) });
    }
  };

  const finish = async () => {
    if (step === "success") {
      if (welcomeTimer.current) clearTimeout(welcomeTimer.current);
      await sendWelcome();
      try {
        await saveNotificationPreferences(true);
      } catch (error) {
        logWarning(`Saving notification preferences failed: ${pushErrorMessage(error)}`, "pwa");
      }
      onFinish("enabled");
    } else {
      onFinish(failure ? "failed" : "declined");
    }
  };

  const skip = () => dispatch({ event: "skip" });
  const close = () => {
    if (step === "success" || step === "declined") void finish();
    else if (step !== "permission") skip();
  };

  const titles: Record<OnboardingStep, string> = {
    welcome: `Welcome to ${siteName}, ${username}!`,
    benefits: "Stay in the loop",
    permission: "Allow notifications",
    success: "You're all set!",
    declined: failure ? "Notifications are off for now" : "No problem",
  };

  return (
    <Modal open={open} onClose={close} title={titles[step]} className="onboarding-dialog" busy={step === "permission"}>
      <div className="onboarding" data-step={step}>
        <ol className="onboarding-dots" aria-label="Progress">
          {(["welcome", "benefits", "permission", "success"] as const).map((s, i) => {
            const order = ["welcome", "benefits", "permission", "success"];
            const at = step === "declined" ? 3 : order.indexOf(step);
            return <li key={s} className={i <= at ? "is-done" : ""} aria-current={i === at ? "step" : undefined} />;
          })}
        </ol>
        {step === "welcome" && (
          <>
            <p>Your account is ready. Identify as many scenes as you like, and keep every answer in your history.</p>
            <div className="island-dialog-actions">
              <button type="button" className="btn btn-ghost" onClick={skip}>
                Skip for Now
              </button>
              <button type="button" className="btn btn-primary" onClick={() => dispatch({ event: "next" })}>
                Next
              </button>
            </div>
          </>
        )}
        {step === "benefits" && (
          <>
            <p>Turn on notifications and {siteName} keeps you posted:</p>
            <ul className="onboarding-benefits">
              {BENEFITS.map((b) => (
                <li key={b.title}>
                  <strong>{b.title}</strong>
                  <span>{b.text}</span>
                </li>
              ))}
            </ul>
            <div className="island-dialog-actions">
              <button type="button" className="btn btn-ghost" onClick={skip}>
                Skip for Now
              </button>
              <button type="button" className="btn btn-primary" onClick={() => void enable()}>
                Enable Notifications
              </button>
            </div>
          </>
        )}
        {step === "permission" && (
          <p role="status" className="onboarding-waiting">
            Your browser is asking for permission. Choose <strong>Allow</strong> to receive notifications.
          </p>
        )}
        {step === "success" && (
          <>
            <p role="status">Notifications are on. A welcome notification is on its way.</p>
            <div className="island-dialog-actions">
              <button type="button" className="btn btn-primary" onClick={() => void finish()}>
                Get Started
              </button>
            </div>
          </>
        )}
        {step === "declined" && (
          <>
            {failure && (
              <p className="pwa-error" role="alert">
                {failure}
              </p>
            )}
            <p>
              You can enable notifications later in <a href="/pwa-settings">PWA Settings</a>.
            </p>
            <div className="island-dialog-actions">
              <button type="button" className="btn btn-primary" onClick={() => void finish()}>
                Get Started
              </button>
            </div>
          </>
        )}
      </div>
    </Modal>
  );
}

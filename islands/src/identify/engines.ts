/**
 * The "Choose AI Engine" step: which engines are offered, their names and descriptions
 * (settings `{engine}_name` / `{engine}_desc`, `auto_desc`), and the default choice of
 * SPEC section 4.
 */
import type { ModelsResponse, Settings } from "../lib/query";

export const ENGINE_ORDER = ["google", "openai", "xai", "anthropic", "ensemble", "library"] as const;

const FALLBACK_NAMES: Record<string, string> = {
  auto: "Auto",
  google: "Google Gemini",
  openai: "OpenAI GPT",
  xai: "xAI Grok",
  anthropic: "Anthropic Claude",
  ensemble: "Ensemble",
  library: "Library",
};

/** The display name of an engine id: the setting `{id}_name`, else a built-in name. */
export function engineName(id: string, settings: Settings | undefined): string {
  const key = id.trim().toLowerCase();
  return settings?.[`${key}_name`] || FALLBACK_NAMES[key] || id;
}

/** The description of an engine id: the setting `{id}_desc` (empty when unset). */
export function engineDescription(id: string, settings: Settings | undefined): string {
  const key = id.trim().toLowerCase();
  return settings?.[`${key}_desc`] || (key === "auto" ? AUTO_DESC : "");
}

const AUTO_DESC = "Picks the best engine available right now.";

export interface EngineOption {
  id: string;
  name: string;
  description: string;
  available: boolean;
}

/** Auto first, then every engine the server reports, available or not. */
export function engineOptions(models: ModelsResponse | undefined, settings: Settings | undefined): EngineOption[] {
  const s = settings ?? {};
  const available = models?.available ?? {};
  const ids = ENGINE_ORDER.filter((id) => id !== "library" || id in available);
  const anyAvailable = ids.some((id) => available[id] === true);
  return [
    {
      id: "auto",
      name: engineName("auto", s),
      description: engineDescription("auto", s),
      available: models ? anyAvailable : true,
    },
    ...ids.map((id) => ({
      id,
      name: engineName(id, s),
      description: engineDescription(id, s),
      available: available[id] === true,
    })),
  ];
}

function usable(id: string | null | undefined, models: ModelsResponse): id is string {
  if (!id) return false;
  const key = id.trim().toLowerCase();
  if (key === "auto") return false;
  return models.available[key] === true;
}

/**
 * The default engine: the admin's primary model if available, then the user's
 * defaultAiModel if available, else the recommended one (auto when nothing fits).
 */
export function defaultEngine(
  models: ModelsResponse,
  primary: string | null | undefined,
  userDefault: string | null | undefined,
): string {
  if (usable(primary, models)) return primary.trim().toLowerCase();
  if (usable(userDefault, models)) return userDefault.trim().toLowerCase();
  if (usable(models.recommended, models)) return models.recommended;
  return "auto";
}

/** The set of available engine ids, as a stable string, to notice changes. */
export function availabilityKey(models: ModelsResponse): string {
  return Object.entries(models.available)
    .filter(([, v]) => v === true)
    .map(([k]) => k)
    .sort()
    .join(",");
}

/** Whether the chosen engine can still be used. */
export function stillAvailable(choice: string, models: ModelsResponse): boolean {
  if (choice === "auto") return Object.values(models.available).some((v) => v === true);
  return models.available[choice] === true;
}

/**
 * The engine the uploader will ask (SPEC section 4 "Engine mode"): the person's saved
 * default, else the site's primary engine, else the recommended one, else Auto, until they
 * choose one themselves; and when the server's list of available engines changes while the
 * page is open, a toast, and a fallback when the chosen engine went away.
 */
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { getJson } from "../../lib/api";
import type { ModelsResponse, Settings } from "../../lib/query";
import { useToast } from "../../lib/useToast";
import { availabilityKey, defaultEngine, stillAvailable } from "../engines";

interface Sources {
  models: ModelsResponse | undefined;
  settings: Settings | undefined;
  settingsPending: boolean;
  /** Only a signed-in person has saved preferences to read. */
  signedIn: boolean;
}

export function useEngineChoice({ models, settings, settingsPending, signedIn }: Sources) {
  const { toast } = useToast();
  const prefs = useQuery({
    queryKey: ["/api/profiles/preferences"],
    queryFn: () => getJson<{ defaultAiModel?: string }>("/api/profiles/preferences"),
    enabled: signedIn,
    retry: false,
  });
  const [engine, setEngine] = useState<string>("auto");
  /** The person chose: no default may override them any more. */
  const touched = useRef(false);

  const lastAvailability = useRef<string | null>(null);
  useEffect(() => {
    if (!models) return;
    const key = availabilityKey(models);
    const before = lastAvailability.current;
    lastAvailability.current = key;
    if (before === null) return;
    if (before !== key) {
      toast({ title: "AI Models Updated", description: "The available AI engines have changed." });
      setEngine((cur) => (stillAvailable(cur, models) ? cur : models.available[models.recommended] ? models.recommended : "auto"));
    }
  }, [models, toast]);

  const prefsSettled = !signedIn || prefs.isFetched;
  useEffect(() => {
    if (!models || touched.current || !prefsSettled || settingsPending) return;
    setEngine(defaultEngine(models, settings?.ai_primary_model, prefs.data?.defaultAiModel));
  }, [models, settings, settingsPending, prefs.data, prefsSettled]);

  const choose = useCallback((id: string) => {
    touched.current = true;
    setEngine(id);
  }, []);

  return { engine, choose };
}

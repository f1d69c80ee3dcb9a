/**
 * A tiny island that exercises the shared pieces (query cache, toast, error boundary);
 * used by the browser tests and as a template for new islands. Props: `{ label?: string }`.
 */
import { useState } from "react";
import { useSettings } from "../lib/query";
import { useToast } from "../lib/useToast";

export interface DemoProps {
  label?: string;
}

export default function Demo({ label = "Demo island" }: DemoProps) {
  const { toast } = useToast();
  const settings = useSettings();
  const [boom, setBoom] = useState(false);
  if (boom) throw new Error("Demo island failure");
  return (
    <div className="demo-island" data-testid="demo-island">
      <p>
        {label}: site name <strong>{settings.data?.site_name ?? "…"}</strong>
      </p>
      <button type="button" className="btn btn-ghost" onClick={() => toast({ title: "Hello", description: "From the demo island." })}>
        Show toast
      </button>
      <button type="button" className="btn btn-ghost" onClick={() => setBoom(true)}>
        Break it
      </button>
    </div>
  );
}

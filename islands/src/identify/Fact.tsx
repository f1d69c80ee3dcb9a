/** One fact of a result (`<dt>` and `<dd>`, inside a `<dl class="id-facts">`); blank values read "Unknown". */
export function Fact({ label, value }: { label: string; value: string | number | null | undefined }) {
  return (
    <div className="id-fact">
      <dt>{label}</dt>
      <dd>{value === null || value === undefined || value === "" ? "Unknown" : value}</dd>
    </div>
  );
}

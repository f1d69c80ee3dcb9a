// The API reference viewer of /docs/api: RapiDoc (a web component, bundled from npm, no CDN)
// reading /api/openapi.json. Only that page loads this entry; the site's runtime does not.
// RapiDoc's fonts are off (our CSP allows fonts from this origin only) and its colours follow
// the site's light or dark theme.
import "rapidoc";

const doc = document.querySelector<HTMLElement>("rapi-doc");
if (doc) {
  const apply = () => {
    // The site's choice (data-theme: light, dark or system), as the stylesheet reads it.
    const theme = document.documentElement.dataset.theme;
    const dark = theme === "dark" || (theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
    doc.setAttribute("theme", dark ? "dark" : "light");
    doc.setAttribute("bg-color", dark ? "#141822" : "#ffffff");
    doc.setAttribute("text-color", dark ? "#eef0f6" : "#14161b");
    doc.setAttribute("primary-color", dark ? "#f5b83d" : "#9a4700");
    doc.setAttribute("nav-bg-color", dark ? "#1b2030" : "#f7f5f0");
    doc.setAttribute("nav-text-color", dark ? "#eef0f6" : "#14161b");
  };
  apply();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", apply);
  new MutationObserver(apply).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  doc.setAttribute("layout", matchMedia("(max-width: 760px)").matches ? "column" : "row");
}

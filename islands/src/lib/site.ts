/**
 * The site's name as the operator configured it (setting `site_name`), read from the page's
 * Open Graph tag that the server renders, so client texts follow a renamed deployment.
 */
export function siteName(doc: Document = document): string {
  return doc.querySelector<HTMLMetaElement>('meta[property="og:site_name"]')?.content?.trim() || "Reelfind";
}

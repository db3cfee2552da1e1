import { RedocStandalone } from "redoc";

// Redoc's own theme, close to the portal's (Mantine's blue, its font); the menu sticks
// under the portal's header
const THEME = {
  colors: { primary: { main: "#228be6" } },
  typography: {
    fontFamily: "-apple-system, BlinkMacSystemFont, Segoe UI, Roboto, Helvetica, Arial, sans-serif",
    headings: { fontFamily: "inherit" },
  },
};

/** An API's OpenAPI document rendered by Redoc: loaded with the API's page only (most of a
 * bundle on its own), never with the catalogue. Reference only: calls are made with the
 * app's key from the developer's own client, not from the page. */
export default function ApiReference({ document }: { document: Record<string, unknown> }) {
  return (
    <section aria-label="API reference">
      <RedocStandalone
        spec={document}
        options={{
          scrollYOffset: 60,
          hideDownloadButton: false,
          expandResponses: "200,201",
          theme: THEME,
        }}
      />
    </section>
  );
}

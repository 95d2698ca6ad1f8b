/*
 * The files of the HTML views (src/output/assets/: page template, script,
 * style sheet, and the vendored d3 and d3-flame-graph bundles), compiled
 * into the binary by tools/embed/embed.py so a written HTML file is
 * self-contained and framewalk needs no data files at run time.
 */
#ifndef FRAMEWALK_OUTPUT_HTML_ASSETS_H
#define FRAMEWALK_OUTPUT_HTML_ASSETS_H

#include <stddef.h>

struct html_asset {
	const char *name;   /* base name, e.g. "flame.js" */
	const char *data;   /* NUL-terminated; contains no other NUL */
	size_t len;
};

/* Ends with an entry whose name is NULL. */
extern const struct html_asset html_assets[];

/* The asset with this base name, or NULL. */
const struct html_asset *html_asset_find(const char *name);

#endif

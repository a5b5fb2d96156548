/*
 * api_viewer: the web viewer's files, compiled into the binary, and the
 * routes that serve them (GET / and GET /viewer/<file>).
 *
 * The table below is generated at build time by tests/tools/embed.c from
 * api/viewer/ (see the Makefile): the service needs no files on disk and no
 * network to serve its UI. Lookup only ever returns a table row, so a request
 * path can never reach the file system.
 */
#ifndef API_VIEWER_H
#define API_VIEWER_H

#include <stddef.h>

struct MHD_Connection;

/* One embedded file. data is static and NUL-terminated (len excludes it). */
typedef struct api_viewer_asset {
    const char *name;         /* base name, e.g. "viewer.js" */
    const char *content_type; /* e.g. "text/javascript; charset=utf-8" */
    const char *etag;         /* quoted strong validator: a hash of data */
    const unsigned char *data;
    size_t len;
} api_viewer_asset;

/* Generated: api_viewer_asset_count rows, then one all-zero sentinel row. */
extern const api_viewer_asset api_viewer_assets[];
extern const unsigned api_viewer_asset_count;

/*
 * The asset a GET path names: "/" and "/index.html" give index.html,
 * "/viewer/<name>" gives <name>. NULL for anything else (the caller answers
 * 404 with the usual error body). path must be the URL path without query.
 */
const api_viewer_asset *api_viewer_find(const char *path);

/*
 * The response for an asset: status 200 with the body (static, not copied),
 * Content-Type, ETag and Cache-Control: no-cache, or 304 without a body when
 * if_none_match (the request's If-None-Match header, may be NULL) carries
 * the ETag. *http_status receives 200 or 304. NULL when out of memory. The
 * caller queues and destroys it.
 */
struct MHD_Response *api_viewer_response(const api_viewer_asset *a, const char *if_none_match,
                                         unsigned *http_status);

/*
 * Queues the asset on c (api_viewer_response with c's If-None-Match): 200 with the body,
 * Content-Type, ETag and Cache-Control: no-cache (browsers revalidate, so a new binary's viewer is
 * seen at once), or 304 without a body when If-None-Match carries the ETag.
 * Returns the MHD_Result of MHD_queue_response (MHD_NO on failure).
 */
int api_viewer_queue(struct MHD_Connection *c, const api_viewer_asset *a);

#endif

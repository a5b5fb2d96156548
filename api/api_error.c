/*
 * api_error: the code table (see api_error.h) and the mappings from nav/ and
 * storage/ statuses onto the contract's codes.
 */
#include "api/api_error.h"

#include <stdio.h>

static const unsigned code_http[API_CODE_COUNT] = {
#define API_CODE_HTTP(name, http, code) [name] = http,
    API_CODE_LIST(API_CODE_HTTP)
#undef API_CODE_HTTP
};

static const char *const code_name[API_CODE_COUNT] = {
#define API_CODE_NAME(name, http, code) [name] = code,
    API_CODE_LIST(API_CODE_NAME)
#undef API_CODE_NAME
};

unsigned api_code_http(api_code c) {
    return (unsigned)c < API_CODE_COUNT ? code_http[c] : 500;
}

const char *api_code_name(api_code c) {
    return (unsigned)c < API_CODE_COUNT ? code_name[c] : "internal";
}

int api_code_is_error(api_code c) {
    return api_code_http(c) >= 400;
}

api_code api_code_from_nav(nav_status s) {
    switch (s) {
    case NAV_OK:
        return API_OK;
    case NAV_E_INVALID_ARG:
        return API_E_BAD_REQUEST;
    case NAV_E_INVALID_MESH:
    case NAV_E_LIMIT: /* a mesh over the configured size limits is an unacceptable mesh */
        return API_E_INVALID_NAVMESH;
    case NAV_E_OFF_MESH:
        return API_E_POINT_OFF_MESH;
    case NAV_E_NOT_FOUND:
        return API_E_NOT_FOUND;
    case NAV_E_NOMEM:
    case NAV_E_DEADLINE:
        return API_E_UNAVAILABLE; /* transient: the client may retry (smaller, or later) */
    case NAV_E_CANCELLED:
        /* a bake stopped at its caller's request (a cancelled job, a stopping server): nothing
           changed and the same request may be made again */
        return API_E_UNAVAILABLE;
    case NAV_E_EMPTY:
        return API_E_INVALID_LEVEL; /* the level baked to no walkable surface at all */
    case NAV_E_CORRUPT:
    case NAV_STATUS_COUNT:
        break;
    }
    return API_E_INTERNAL;
}

api_code api_code_from_store(store_status s) {
    switch (s) {
    case STORE_OK:
        return API_OK;
    case STORE_NOT_FOUND:
        return API_E_NOT_FOUND;
    case STORE_INVALID_ARG:
        return API_E_BAD_REQUEST;
    case STORE_IO:
    case STORE_NOMEM:
    case STORE_CONFLICT:
    case STORE_UNAVAILABLE:       /* PostgreSQL down: nothing was written */
        return API_E_UNAVAILABLE; /* the request changed nothing and may be retried */
    case STORE_STATUS_COUNT:
        break;
    }
    return API_E_INTERNAL;
}

api_code api_fail(api_err *e, api_code code, const char *fmt, ...) {
    if (e) {
        e->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof e->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

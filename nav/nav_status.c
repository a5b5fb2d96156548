/*
 * nav_status: the human readable names of nav_status values, generated from
 * the same X-macro list as the enum so the two can never drift.
 */
#include "nav/nav_status.h"

static const char *const nav_status_names[NAV_STATUS_COUNT] = {
#define NAV_STATUS_NAME(name, text) [name] = text,
    NAV_STATUS_LIST(NAV_STATUS_NAME)
#undef NAV_STATUS_NAME
};

const char *nav_status_text(nav_status s) {
    if ((int)s < 0 || s >= NAV_STATUS_COUNT)
        return "unknown status";
    return nav_status_names[s];
}

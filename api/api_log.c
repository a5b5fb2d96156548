/*
 * api_log: stderr logging with a level threshold (see api_log.h).
 */
#include "api/api_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static api_log_level threshold = API_LOG_INFO;

int api_log_level_parse(const char *s) {
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void api_log_set_level(api_log_level level) {
    threshold = level;
}

int api_log_enabled(api_log_level level) {
    return level <= threshold;
}

void api_log(api_log_level level, const char *fmt, ...) {
    if (!api_log_enabled(level))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "navd: %s\n", line);
}

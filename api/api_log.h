/*
 * api_log: the service's log, one line per event on stderr, "navd: " first.
 *
 * Levels filter what is written; each line is written with one stdio call
 * so lines from worker threads never interleave. service/ sets the level
 * once at start-up from the configuration.
 */
#ifndef API_LOG_H
#define API_LOG_H

typedef enum api_log_level {
    API_LOG_ERROR = 0,
    API_LOG_WARN,
    API_LOG_INFO,
    API_LOG_DEBUG
} api_log_level;

/* Parses "error", "warn", "info" or "debug"; -1 when unknown. */
int api_log_level_parse(const char *s);
/* Sets the threshold (before worker threads start). */
void api_log_set_level(api_log_level level);
/* True when messages of `level` are written. */
int api_log_enabled(api_log_level level);
/* Writes one line (a newline is added). */
void api_log(api_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/*
 * api_query: per-thread scratch for the query endpoints (see api_query.h).
 */
#include "api/api_query.h"

#include <pthread.h>

static pthread_key_t scratch_key;
static int key_ready;

int api_query_init(const api_config *cfg) {
    (void)cfg;
    if (!key_ready && pthread_key_create(&scratch_key, NULL) != 0)
        return -1;
    key_ready = 1;
    return 0;
}

void api_query_shutdown(void) {
    if (key_ready)
        pthread_key_delete(scratch_key);
    key_ready = 0;
}

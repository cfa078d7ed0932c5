/* code_env.h: the switches read from the environment that change generated code (the measuring
 * forms of docs/runtime.md), in one table: a pass or emitter reads its switch through
 * tl_code_env, and the kernel cache key (lib/api/jit.c) hashes every entry of the same table, so
 * a switch cannot change the PTX without changing the key. */
#ifndef TILEC_CODE_ENV_H
#define TILEC_CODE_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* The value of switch `name` (NULL when unset), or NULL for a name not in the table. */
const char *tl_code_env(const char *name);

/* Switch `name` is set to a value starting with '0' (a default-on form turned off), or with '1'
 * (an opt-in form turned on). */
bool tl_code_env_off(const char *name);
bool tl_code_env_on(const char *name);

/* Switch `name`, one that changes no generated code (not in the table: compile-time measuring
 * forms such as TILEC_DEAD_BLOCKS), is set to a value starting with '0'. */
bool tl_env_off(const char *name);

/* Entry i of the table (NULL past the end). */
const char *tl_code_env_name(size_t i);

#endif

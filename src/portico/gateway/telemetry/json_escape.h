/* JSON strings as orjson writes them, for the C modules that write JSON themselves
 * (telemetry/jsonline.c, plugins/_xml_json.c, plugins/_xml_fast.cc): '"', '\\' and the
 * bytes below 0x20 are escaped, everything else is copied, UTF-8 as it is. C and C++. */
#ifndef PORTICO_JSON_ESCAPE_H
#define PORTICO_JSON_ESCAPE_H

#include <stdint.h>

static const char HEX[] = "0123456789abcdef";

/* the escape of byte c (one that needs it) at out; its length */
static inline int escape_of(unsigned char c, char *out) {
    out[0] = '\\';
    switch (c) {
    case '"': out[1] = '"'; return 2;
    case '\\': out[1] = '\\'; return 2;
    case '\b': out[1] = 'b'; return 2;
    case '\f': out[1] = 'f'; return 2;
    case '\n': out[1] = 'n'; return 2;
    case '\r': out[1] = 'r'; return 2;
    case '\t': out[1] = 't'; return 2;
    default:
        out[1] = 'u';
        out[2] = '0';
        out[3] = '0';
        out[4] = HEX[c >> 4];
        out[5] = HEX[c & 15];
        return 6;
    }
}

/* Whether any of the 8 bytes of w needs escaping (below 0x20, '"' or '\\'), eight at a time:
 * the classic "has a byte less than n" and "has a zero byte" word tricks. They never miss
 * one; they may flag a byte that needs none above one that does (a borrow only carries
 * upwards: the lowest flag is always a true one). Bytes from 0x80 up never flag. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t flags_escape(uint64_t w) {
    uint64_t below = (w - ONES * 0x20) & ~w;
    uint64_t quote = w ^ (ONES * '"');
    uint64_t backslash = w ^ (ONES * '\\');
    return (below | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash)) & HIGHS;
}

#endif

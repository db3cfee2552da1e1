/* portico.gateway.plugins._xml_json in C: the same function, the same bytes, as _xml_json.py
 * (read its docstring first: it is the reference, the mapping is _xml_mapping's, and
 * tests/gateway/plugins/test_xml_json.py checks that both give the same JSON text, or the
 * same refusal, for generated documents).
 *
 * Why C: xml-to-json converts a whole answer per request. Through lxml, a 10 KB answer cost
 * 3.5 million instructions (callgrind), two thirds of them making a Python object, a tag and a
 * text string for each element and walking them; the parse itself a third. Here libxml2
 * parses with its SAX2 interface into a compact tree of this module's own (one struct per
 * element, the texts in one buffer, names as libxml2 interns them) and the JSON text is written
 * straight from it: no Python object per element.
 *
 * Hardened as _xml_parser.py's lxml parser is, and more: a document type declaration stops the
 * parse where it starts (internalSubset), before any of the DTD is read, so no entity is ever
 * declared, hence none expanded, and no external subset or entity is ever loaded (this
 * handler has no resolveEntity, getEntity or externalSubset callback: an entity that is not
 * one of XML's five is an error); no network (XML_PARSE_NONET), libxml2's default limits
 * (depth 256, text 10 MB: no XML_PARSE_HUGE). Acceptance is lxml's: a document is refused on
 * any error, not only a fatal one (a namespace error is an error).
 *
 * Two passes over the parsed tree, because the mapping needs them: names first, in document
 * order (the reference gives a namespace its prefix where it first meets it, and
 * names an element by its first occurrence), then the text, grouping repeated siblings into
 * arrays (a name that comes back later in the same parent joins the array of its first
 * occurrence).
 *
 * Nothing is kept between calls: each call parses, writes and frees. Built by
 * scripts/build_native.py beside the mypyc modules, against Debian's libxml2 (libxml2-dev);
 * used while that build is current.
 *
 * xml_to_json tries the fast path first (_xml_fast.cc: pugixml, for the documents it can
 * vouch for, the same JSON text); what it declines comes here, the strict path, which
 * decides every refusal. strict_to_json and fast_to_json run each path alone (the tests).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../telemetry/json_escape.h"
#include "_xml_fast.h"

#define XML_NAMESPACE "http://www.w3.org/XML/1998/namespace"
#define SOAP11_NAMESPACE "http://schemas.xmlsoap.org/soap/envelope/"
#define UNCHANGED 0
#define CAMEL 1

/* what the module imports from _xml_mapping (the exceptions, the non-ASCII naming) and
 * orjson (a fault's detail as an object): set once, at import */
static PyObject *MALFORMED, *SOAP_FAULT, *STYLED, *LOADS;

/* ------------------------------------------------------------------ growable memory */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    PyObject *bytes; /* the bytes object holding data (the answer, written in place), or NULL */
} Buf;

static void buf_free(Buf *b) {
    if (b->bytes != NULL)
        Py_CLEAR(b->bytes);
    else
        PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int buf_grow(Buf *b, Py_ssize_t more) {
    if (more > PY_SSIZE_T_MAX / 2 - b->len) return -1;
    Py_ssize_t cap = b->cap * 2;
    if (cap < b->len + more) cap = b->len + more;
    if (cap < 256) cap = 256;
    char *data;
    if (b->bytes != NULL) {
        if (_PyBytes_Resize(&b->bytes, cap) < 0) { /* (it freed the bytes) */
            b->data = NULL;
            b->len = b->cap = 0;
            return -1;
        }
        data = PyBytes_AS_STRING(b->bytes);
    } else {
        data = PyMem_Realloc(b->data, (size_t)cap);
        if (data == NULL) return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buf_reserve(Buf *b, Py_ssize_t more) {
    return more <= b->cap - b->len ? 0 : buf_grow(b, more);
}

static inline int buf_put(Buf *b, const void *s, Py_ssize_t n) {
    if (n == 0) return 0; /* (s may be an empty Buf's NULL, which memcpy may not be given) */
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static inline int buf_byte(Buf *b, char c) {
    if (buf_reserve(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

/* an empty Buf made to write into a new bytes object of cap bytes */
static int bytes_buf(Buf *b, Py_ssize_t cap) {
    b->bytes = PyBytes_FromStringAndSize(NULL, cap);
    if (b->bytes == NULL) return -1;
    b->data = PyBytes_AS_STRING(b->bytes);
    b->len = 0;
    b->cap = cap;
    return 0;
}

static inline int buf_str(Buf *b, const char *s) { return buf_put(b, s, (Py_ssize_t)strlen(s)); }

/* an array of items of one type in a Buf: room for one more, its index */
#define PUSH(buf, type) (buf_reserve(&(buf), (Py_ssize_t)sizeof(type)) < 0 ? -1 : push_index(&(buf), sizeof(type)))
static inline Py_ssize_t push_index(Buf *b, size_t size) {
    Py_ssize_t index = b->len / (Py_ssize_t)size;
    b->len += (Py_ssize_t)size;
    return index;
}
#define ITEMS(buf, type) ((type *)(buf).data)
#define COUNT(buf, type) ((buf).len / (Py_ssize_t)sizeof(type))

/* ------------------------------------------------------------------ JSON strings */

/* escaped as orjson escapes (escape_of, flags_escape: telemetry/json_escape.h), ESCAPED
 * marking the bytes that are */
static unsigned char ESCAPED[256];

/* UTF-8 text s as a JSON string, quotes included: 8 bytes at a time, each word copied whole
 * and the output moved on to its first byte that needs escaping (the lowest flag
 * flags_escape sets is always a true one: a borrow only carries upwards) */
static int put_string(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (n > PY_SSIZE_T_MAX / 6 - 10) return -1;
    /* the worst case: every byte \u00XX; and room for a whole word copied past the end */
    if (buf_reserve(b, 6 * n + 10) < 0) return -1;
    char *out = b->data + b->len;
    *out++ = '"';
    Py_ssize_t i = 0;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        memcpy(out, &w, 8);
        uint64_t flags = flags_escape(w);
        if (!flags) {
            out += 8;
            i += 8;
            continue;
        }
        int clean = __builtin_ctzll(flags) >> 3; /* the bytes before the first to escape */
        out += clean;
        i += clean;
        out += escape_of(s[i], out);
        i++;
    }
    for (; i < n; i++) {
        if (ESCAPED[s[i]])
            out += escape_of(s[i], out);
        else
            *out++ = (char)s[i];
    }
    *out++ = '"';
    b->len = out - b->data;
    return 0;
}

/* ------------------------------------------------------------------ Python's whitespace */

/* str.isspace(), which str.strip() strips (the reference joins and strips mixed text) */
static inline int python_space(uint32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* the code point at s (valid UTF-8: libxml2 gives nothing else); its length in *size */
static inline uint32_t utf8_at(const unsigned char *s, int *size) {
    unsigned char c = s[0];
    if (c < 0x80) {
        *size = 1;
        return c;
    }
    if (c < 0xE0) {
        *size = 2;
        return ((uint32_t)(c & 0x1F) << 6) | (s[1] & 0x3F);
    }
    if (c < 0xF0) {
        *size = 3;
        return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    }
    *size = 4;
    return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
           ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

/* s without the whitespace str.strip() removes, as [*start, *end) */
static void python_strip(const unsigned char *s, Py_ssize_t n, Py_ssize_t *start, Py_ssize_t *end) {
    Py_ssize_t i = 0, j = n;
    int size;
    while (i < j && python_space(utf8_at(s + i, &size))) i += size;
    while (j > i) {
        Py_ssize_t k = j - 1;
        while (k > i && (s[k] & 0xC0) == 0x80) k--; /* back to the code point's first byte */
        if (!python_space(utf8_at(s + k, &size))) break;
        j = k;
    }
    *start = i;
    *end = j;
}

static int all_space(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t start, end;
    python_strip(s, n, &start, &end);
    return start == end;
}

/* ------------------------------------------------------------------ the parsed document */

typedef struct {
    const xmlChar *uri;    /* NULL: no namespace (libxml2's dictionary holds the strings) */
    const xmlChar *local;
    const xmlChar *prefix; /* as the document wrote it; NULL: none */
    int32_t parent, first_child, last_child, next, children;
    int32_t attrs, attr_count;   /* in Doc.attrs */
    int32_t ns, ns_count;        /* its namespace declarations, in Doc.ns */
    int32_t key;                 /* its JSON name (the naming pass) */
    int32_t same;                /* the next sibling of the same name (the writing pass) */
    int32_t decls, decl_count;   /* a top-level element's @xmlns declarations */
    int has_text;                /* a text or CDATA node before its first child, even empty */
    Py_ssize_t text, text_len;   /* that text (in Doc.text) */
    Py_ssize_t tail, tail_len;   /* the text after it, up to its next sibling */
} Node;

typedef struct {
    const xmlChar *uri, *local;
    Py_ssize_t value, value_len; /* in Doc.text */
    int32_t key;
} Attr;

typedef struct {
    const xmlChar *prefix, *uri;
    /* (the naming pass, while the declaration is in scope: see nsmap_prefix) */
    int32_t prefix_id;  /* its prefix in Names.scope */
    int32_t space;      /* its namespace in Names */
    int32_t hides;      /* the declaration of the same prefix it hides, or -1 */
    int32_t below;      /* the next declaration of the same namespace in scope, or -1 */
} NsDecl;

typedef struct {
    xmlParserCtxtPtr ctxt;
    Buf nodes, attrs, ns; /* Node, Attr, NsDecl */
    Buf text;
    int32_t open;    /* the element being read (-1 before and after the root) */
    int depth;       /* how many elements are open */
    int32_t run;     /* the element whose text the characters are, or -1 */
    int run_is_tail; /* ... its tail rather than its leading text */
    int doctype;     /* a document type declaration started: the parse was stopped */
    int failed;      /* out of memory: the parse was stopped */
    int erred;       /* an error (not a warning) was reported */
    Buf message;     /* the first error's message, line and column */
    int line, column;
} Doc;

#define NODE(d, i) (&ITEMS((d)->nodes, Node)[i])

static void stop(Doc *d) {
    d->failed = 1;
    xmlStopParser(d->ctxt);
}

static void error_at(Doc *d, const char *message, int line, int column);

/* Debian's libxml2 (2.9) reads one level more than lxml's (2.14: 256, its message): the
 * reference's limit, so that the same documents are refused */
#define MAX_DEPTH 256
/* lxml's limit on a text (libxml2's XML_MAX_TEXT_LENGTH, without XML_PARSE_HUGE): one run of
 * text and CDATA between two tags (comments and processing instructions are dropped) */
#define MAX_TEXT 10000000
static void too_deep(Doc *d) {
    xmlParserInputPtr input = d->ctxt->input;
    error_at(d, "Excessive depth in document: 256, use XML_PARSE_HUGE option",
             input ? input->line : 0, input ? input->col : 0);
    xmlStopParser(d->ctxt);
}

/* an attribute value into the text: libxml2 gives "&" as "&#38;" when it does not replace
 * entities (the tree builder decodes it again: xmlSAX2AttributeNs), and nothing else of
 * the kind, since no entity but XML's five can be declared */
static int put_value(Buf *text, const xmlChar *s, const xmlChar *end) {
    const xmlChar *amp = memchr(s, '&', (size_t)(end - s));
    if (amp == NULL) return buf_put(text, s, end - s);
    while (amp != NULL) {
        if (buf_put(text, s, amp - s) < 0 || buf_byte(text, '&') < 0) return -1;
        s = amp + (end - amp >= 5 && memcmp(amp, "&#38;", 5) == 0 ? 5 : 1);
        amp = memchr(s, '&', (size_t)(end - s));
    }
    return buf_put(text, s, end - s);
}

static void on_start(void *user, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int ns_count, const xmlChar **ns, int attr_count, int defaulted,
                     const xmlChar **attrs) {
    Doc *d = user;
    (void)defaulted; /* (from a DTD: there is none) */
    if (d->failed) return;
    if (++d->depth > MAX_DEPTH) {
        too_deep(d);
        return;
    }
    Py_ssize_t index = PUSH(d->nodes, Node);
    if (index < 0 || index >= INT32_MAX) {
        stop(d);
        return;
    }
    Node *node = NODE(d, index);
    node->uri = uri;
    node->local = local;
    node->prefix = prefix;
    node->parent = d->open;
    node->first_child = node->last_child = node->next = -1;
    node->children = 0;
    node->key = node->same = -1;
    node->decls = node->decl_count = 0;
    node->ns = (int32_t)COUNT(d->ns, NsDecl);
    node->ns_count = ns_count;
    for (int i = 0; i < ns_count; i++) {
        Py_ssize_t at = PUSH(d->ns, NsDecl);
        if (at < 0) {
            stop(d);
            return;
        }
        ITEMS(d->ns, NsDecl)[at] = (NsDecl){ns[2 * i], ns[2 * i + 1], -1, -1, -1, -1};
    }
    node->attrs = (int32_t)COUNT(d->attrs, Attr);
    node->attr_count = attr_count;
    for (int i = 0; i < attr_count; i++) {
        const xmlChar **a = attrs + 5 * i; /* localname, prefix, URI, value, end */
        Py_ssize_t at = PUSH(d->attrs, Attr);
        Py_ssize_t value = d->text.len;
        if (at < 0 || put_value(&d->text, a[3], a[4]) < 0) {
            stop(d);
            return;
        }
        ITEMS(d->attrs, Attr)[at] = (Attr){a[2], a[0], value, d->text.len - value, -1};
    }
    node = NODE(d, index); /* (the arrays may have moved) */
    node->has_text = 0;
    node->text = d->text.len;
    node->text_len = 0;
    node->tail = node->tail_len = 0;
    if (d->open >= 0) {
        Node *parent = NODE(d, d->open);
        if (parent->last_child >= 0)
            NODE(d, parent->last_child)->next = (int32_t)index;
        else
            parent->first_child = (int32_t)index;
        parent->last_child = (int32_t)index;
        parent->children++;
    }
    d->open = (int32_t)index;
    d->run = (int32_t)index;
    d->run_is_tail = 0;
}

static void on_end(void *user, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri) {
    Doc *d = user;
    (void)local, (void)prefix, (void)uri;
    if (d->failed || d->open < 0) return;
    Node *node = NODE(d, d->open);
    node->tail = d->text.len;
    d->run = node->parent >= 0 ? d->open : -1; /* (nothing but markup after the root) */
    d->run_is_tail = 1;
    d->open = node->parent;
    d->depth--;
}

static void on_text(void *user, const xmlChar *s, int len) {
    Doc *d = user;
    if (d->failed || d->run < 0) return;
    if (buf_put(&d->text, s, len) < 0) {
        stop(d);
        return;
    }
    Node *node = NODE(d, d->run);
    Py_ssize_t run;
    if (d->run_is_tail) {
        run = node->tail_len += len;
    } else {
        run = node->text_len += len;
        node->has_text = 1; /* (an empty CDATA section is an empty text: "" not null) */
    }
    if (run > MAX_TEXT) {
        xmlParserInputPtr input = d->ctxt->input;
        error_at(d, "Resource limit exceeded: Text node too long, try XML_PARSE_HUGE",
                 input ? input->line : 0, input ? input->col : 0);
        xmlStopParser(d->ctxt);
    }
}

static void on_doctype(void *user, const xmlChar *name, const xmlChar *public_id,
                       const xmlChar *system_id) {
    Doc *d = user;
    (void)name, (void)public_id, (void)system_id;
    d->doctype = 1;
    xmlStopParser(d->ctxt); /* before "[": nothing of the DTD is read */
}

/* the first error is the one told (lxml's XMLSyntaxError tells the first) */
static void error_at(Doc *d, const char *message, int line, int column) {
    if (d->erred) return;
    d->erred = 1;
    d->line = line;
    d->column = column;
    size_t n = strlen(message);
    if (n > 0 && message[n - 1] == '\n') n--; /* (lxml strips it) */
    if (buf_put(&d->message, message, (Py_ssize_t)n) < 0) stop(d);
}

static void on_error(void *user, xmlErrorPtr error) {
    if (error->level >= XML_ERR_ERROR)
        error_at(user, error->message ? error->message : "", error->line, error->int2);
}

/* what libxml2 reports outside any parser context (an encoding converter's failure): the
 * parse fails through the context as well, so these are dropped, not written to stderr,
 * where an upstream could otherwise put lines of its choosing among the gateway's logs.
 * libxml2 keeps this handler per thread: it is set on each call, in the calling thread.
 * (This libxml2 is the system's, which nothing else in the process uses: lxml carries its
 * own, with its own globals.) */
static void quiet(void *context, const char *message, ...) {
    (void)context, (void)message;
}

static xmlSAXHandler HANDLER;

static void handler_init(void) {
    memset(&HANDLER, 0, sizeof HANDLER);
    HANDLER.initialized = XML_SAX2_MAGIC;
    HANDLER.startElementNs = on_start;
    HANDLER.endElementNs = on_end;
    HANDLER.characters = on_text;
    HANDLER.ignorableWhitespace = on_text;
    HANDLER.cdataBlock = on_text;
    HANDLER.internalSubset = on_doctype;
    HANDLER.serror = on_error;
    /* nothing else: no entity, notation or DTD callback, no resolver, no external subset;
     * comments and processing instructions are dropped as lxml's parser drops them */
}

/* ------------------------------------------------------------------ errors */

static PyObject *malformed(const char *message) {
    PyErr_SetString(MALFORMED, message);
    return NULL;
}

/* lxml's text for a syntax error (XMLSyntaxError: the first error, where it is) */
static PyObject *not_well_formed(Doc *d) {
    PyObject *message;
    if (d->erred) {
        message = PyUnicode_DecodeUTF8(d->message.data, d->message.len, NULL);
        if (message == NULL) {
            PyErr_Clear();
            message = PyUnicode_DecodeASCII(d->message.data, d->message.len, "backslashreplace");
        }
    } else {
        message = PyUnicode_FromString("Document is not well formed");
    }
    if (message == NULL) return NULL;
    PyObject *text;
    if (d->line > 0 && d->column > 0)
        text = PyUnicode_FromFormat("not well-formed XML: %U, line %d, column %d (<string>, line %d)",
                                    message, d->line, d->column, d->line);
    else if (d->line > 0)
        text = PyUnicode_FromFormat("not well-formed XML: %U, line %d (<string>, line %d)", message,
                                    d->line, d->line);
    else
        text = PyUnicode_FromFormat("not well-formed XML: %U (<string>, line %d)", message, d->line);
    Py_DECREF(message);
    if (text == NULL) return NULL;
    PyErr_SetObject(MALFORMED, text);
    Py_DECREF(text);
    return NULL;
}

/* ------------------------------------------------------------------ names */

/* a set of strings, each added once and known by its index (open addressing over FNV-1a
 * hashes): the namespaces met, the prefixes taken. Lookups stay O(1) however many namespaces
 * a document declares (a hostile one declares thousands) */
typedef struct {
    Py_ssize_t at, len; /* in StrTable.text, NUL-terminated */
    uint64_t hash;
} StrEntry;

typedef struct {
    Buf text, entries; /* StrEntry */
    int32_t *table;    /* -1: free */
    Py_ssize_t cap;
} StrTable;

static void table_free(StrTable *t) {
    buf_free(&t->text);
    buf_free(&t->entries);
    PyMem_Free(t->table);
    t->table = NULL;
    t->cap = 0;
}

static uint64_t hash_bytes(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static const char *table_text(StrTable *t, int32_t index) {
    return t->text.data + ITEMS(t->entries, StrEntry)[index].at;
}

/* the index of s; absent: added when add, else -1; -2 out of memory */
static int32_t table_index(StrTable *t, const char *s, int add) {
    Py_ssize_t len = (Py_ssize_t)strlen(s);
    Py_ssize_t count = COUNT(t->entries, StrEntry);
    if (add && 2 * (count + 1) > t->cap) {
        Py_ssize_t cap = t->cap ? t->cap * 2 : 16;
        int32_t *table = PyMem_Malloc((size_t)cap * sizeof(int32_t));
        if (table == NULL) return -2;
        for (Py_ssize_t i = 0; i < cap; i++) table[i] = -1;
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t slot = (Py_ssize_t)(ITEMS(t->entries, StrEntry)[k].hash & (uint64_t)(cap - 1));
            while (table[slot] >= 0) slot = (slot + 1) & (cap - 1);
            table[slot] = (int32_t)k;
        }
        PyMem_Free(t->table);
        t->table = table;
        t->cap = cap;
    }
    if (t->cap == 0) return -1;
    uint64_t hash = hash_bytes(s, len);
    Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)(t->cap - 1));
    for (; t->table[slot] >= 0; slot = (slot + 1) & (t->cap - 1)) {
        StrEntry *entry = &ITEMS(t->entries, StrEntry)[t->table[slot]];
        if (entry->hash == hash && entry->len == len && memcmp(t->text.data + entry->at, s, (size_t)len) == 0)
            return t->table[slot];
    }
    if (!add) return -1;
    Py_ssize_t index = PUSH(t->entries, StrEntry);
    if (index < 0 || index >= INT32_MAX) return -2;
    StrEntry *entry = &ITEMS(t->entries, StrEntry)[index];
    entry->at = t->text.len;
    entry->len = len;
    entry->hash = hash;
    if (buf_put(&t->text, s, len + 1) < 0) return -2;
    t->table[slot] = (int32_t)index;
    return (int32_t)index;
}

/* a namespace met: its prefix for elements (and attributes), the other prefix its attributes
 * get when the elements' is the default one (indices in Names.prefixes, -1: none yet), and
 * the declarations' round that last marked it used */
typedef struct {
    const xmlChar *uri;
    int32_t assigned, attribute;
    int32_t used;
    int32_t innermost; /* the nearest declaration of it in scope (an NsDecl), or -1 */
} Namespace;

typedef struct {
    int kind; /* 0: element, 1: attribute */
    const xmlChar *uri, *local;
    int32_t key;
    int32_t used; /* the namespace it marks used, or -1 */
} Memo;

typedef struct {
    Py_ssize_t raw, raw_len;   /* in Names.raw */
    Py_ssize_t json, json_len; /* its JSON, quoted, with the colon, in Names.json */
    uint64_t hash;
} Key;

/* the reference's _Names, plus the keys (every JSON name, each once) */
typedef struct {
    int style;
    StrTable uris;                   /* the namespaces met, each with its Namespace ... */
    Buf spaces;                      /* ... at the same index */
    StrTable prefixes;               /* the prefixes taken (assigned to a namespace) */
    long next_number;                /* no "ns<N>" below it is free (the taken only grow) */
    Buf used;                        /* int32_t namespaces used since the last declarations */
    int32_t round;                   /* the declarations' round */
    Buf decls;                       /* Decl */
    Memo *memo;
    Py_ssize_t memo_count, memo_cap;
    Buf keys;                        /* Key */
    int32_t *key_table;              /* open addressing over keys, -1: free */
    Py_ssize_t key_cap;
    Buf raw, json;
    Buf scratch;
    StrTable scope;                  /* the prefixes declared in the document ... */
    Buf bound;                       /* ... int32_t each: its declaration in scope, or -1 */
    int32_t text_key;                /* "#text" */
} Names;

static void names_free(Names *n) {
    table_free(&n->uris);
    buf_free(&n->spaces);
    table_free(&n->prefixes);
    buf_free(&n->used);
    buf_free(&n->decls);
    PyMem_Free(n->memo);
    buf_free(&n->keys);
    PyMem_Free(n->key_table);
    buf_free(&n->raw);
    buf_free(&n->json);
    buf_free(&n->scratch);
    table_free(&n->scope);
    buf_free(&n->bound);
}

/* the key of the name s (its id: equal names, equal ids), added if new; -1 out of memory */
static int32_t intern(Names *n, const char *s, Py_ssize_t len) {
    Py_ssize_t count = COUNT(n->keys, Key);
    if (2 * (count + 1) > n->key_cap) {
        Py_ssize_t cap = n->key_cap ? n->key_cap * 2 : 64;
        int32_t *table = PyMem_Malloc((size_t)cap * sizeof(int32_t));
        if (table == NULL) return -1;
        for (Py_ssize_t i = 0; i < cap; i++) table[i] = -1;
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t slot = (Py_ssize_t)(ITEMS(n->keys, Key)[k].hash & (uint64_t)(cap - 1));
            while (table[slot] >= 0) slot = (slot + 1) & (cap - 1);
            table[slot] = (int32_t)k;
        }
        PyMem_Free(n->key_table);
        n->key_table = table;
        n->key_cap = cap;
    }
    uint64_t hash = hash_bytes(s, len);
    Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)(n->key_cap - 1));
    for (; n->key_table[slot] >= 0; slot = (slot + 1) & (n->key_cap - 1)) {
        Key *key = &ITEMS(n->keys, Key)[n->key_table[slot]];
        if (key->hash == hash && key->raw_len == len && memcmp(n->raw.data + key->raw, s, (size_t)len) == 0)
            return n->key_table[slot];
    }
    Py_ssize_t index = PUSH(n->keys, Key);
    if (index < 0 || index >= INT32_MAX) return -1;
    Key *key = &ITEMS(n->keys, Key)[index];
    key->hash = hash;
    key->raw = n->raw.len;
    key->raw_len = len;
    key->json = n->json.len;
    if (buf_put(&n->raw, s, len) < 0 || put_string(&n->json, (const unsigned char *)s, len) < 0 ||
        buf_byte(&n->json, ':') < 0)
        return -1;
    key = &ITEMS(n->keys, Key)[index];
    key->json_len = n->json.len - key->json;
    n->key_table[slot] = (int32_t)index;
    return (int32_t)index;
}

static int names_init(Names *n, int style) {
    memset(n, 0, sizeof *n);
    n->style = style;
    n->next_number = 1;
    n->round = 1;
    n->text_key = intern(n, "#text", 5);
    return n->text_key < 0 ? -1 : 0;
}

static Memo *memo_find(Names *n, int kind, const xmlChar *uri, const xmlChar *local) {
    if (n->memo_cap == 0) return NULL;
    uintptr_t h = ((uintptr_t)uri * 0x9E3779B97F4A7C15ULL) ^ ((uintptr_t)local * 0xC2B2AE3D27D4EB4FULL);
    Py_ssize_t slot = (Py_ssize_t)((h >> 17) + (uintptr_t)kind) & (n->memo_cap - 1);
    for (;; slot = (slot + 1) & (n->memo_cap - 1)) {
        Memo *m = &n->memo[slot];
        if (m->local == NULL) return m; /* free: the caller fills it */
        if (m->local == local && m->uri == uri && m->kind == kind) return m;
    }
}

static Memo *memo_slot(Names *n, int kind, const xmlChar *uri, const xmlChar *local) {
    if (2 * (n->memo_count + 1) > n->memo_cap) {
        Py_ssize_t old_cap = n->memo_cap;
        Memo *old = n->memo;
        n->memo_cap = old_cap ? old_cap * 2 : 64;
        n->memo = PyMem_Calloc((size_t)n->memo_cap, sizeof(Memo));
        if (n->memo == NULL) {
            n->memo = old;
            n->memo_cap = old_cap;
            return NULL;
        }
        for (Py_ssize_t i = 0; i < old_cap; i++) {
            if (old[i].local == NULL) continue;
            *memo_find(n, old[i].kind, old[i].uri, old[i].local) = old[i];
        }
        PyMem_Free(old);
    }
    return memo_find(n, kind, uri, local);
}

#define SPACE(n, i) (&ITEMS((n)->spaces, Namespace)[i])

/* the namespace uri (its index), added if new; -1 out of memory */
static int32_t namespace_of(Names *n, const xmlChar *uri) {
    int32_t index = table_index(&n->uris, (const char *)uri, 1);
    if (index < 0) return -1;
    if (index == COUNT(n->spaces, Namespace)) {
        Namespace space = {uri, -1, -1, 0, -1};
        if (buf_put(&n->spaces, &space, sizeof space) < 0) return -1;
    }
    return index;
}

/* the namespace marked used (once per round, in the order first used) */
static int mark_used(Names *n, int32_t space) {
    if (space < 0 || SPACE(n, space)->used == n->round) return 0;
    SPACE(n, space)->used = n->round;
    return buf_put(&n->used, &space, sizeof space);
}

static const char *prefix_text(Names *n, int32_t prefix) { return table_text(&n->prefixes, prefix); }

/* _Names._fresh: wanted if no other namespace has it, else ns1, ns2... (its index, now
 * taken); -1 out of memory */
static int32_t fresh(Names *n, const char *wanted, int allow_default) {
    if ((wanted[0] || allow_default) && strcmp(wanted, "xml") != 0) {
        int32_t found = table_index(&n->prefixes, wanted, 0);
        if (found == -2) return -1;
        if (found == -1) {
            found = table_index(&n->prefixes, wanted, 1);
            return found < 0 ? -1 : found;
        }
    }
    char candidate[32];
    for (;; n->next_number++) {
        snprintf(candidate, sizeof candidate, "ns%ld", n->next_number);
        int32_t found = table_index(&n->prefixes, candidate, 0);
        if (found == -2) return -1;
        if (found == -1) break;
    }
    int32_t found = table_index(&n->prefixes, candidate, 1);
    return found < 0 ? -1 : found;
}

/* styled(): ASCII names here, exactly as the reference; others through it */
static int put_styled(Names *n, Buf *out, const xmlChar *name) {
    size_t len = strlen((const char *)name);
    if (n->style == UNCHANGED) return buf_put(out, name, (Py_ssize_t)len);
    for (size_t i = 0; i < len; i++) {
        if (name[i] < 0x80) continue;
        PyObject *text = PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)len, NULL);
        if (text == NULL) return -2;
        PyObject *style = PyLong_FromLong(n->style);
        PyObject *styled = style ? PyObject_CallFunctionObjArgs(STYLED, text, style, NULL) : NULL;
        Py_DECREF(text);
        Py_XDECREF(style);
        if (styled == NULL) return -2;
        Py_ssize_t size;
        const char *utf8 = PyUnicode_Check(styled) ? PyUnicode_AsUTF8AndSize(styled, &size) : NULL;
        int result = utf8 == NULL ? -2 : buf_put(out, utf8, size);
        Py_DECREF(styled);
        return result;
    }
    /* words split at runs of "-", "_", "." (empty words dropped) */
    Py_ssize_t start_len = out->len;
    int word_index = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (name[i] == '-' || name[i] == '_' || name[i] == '.')) i++;
        size_t start = i;
        while (i < len && name[i] != '-' && name[i] != '_' && name[i] != '.') i++;
        if (i == start) break;
        const xmlChar *word = name + start;
        size_t size = i - start;
        if (buf_reserve(out, (Py_ssize_t)size) < 0) return -1;
        char *at = out->data + out->len;
        memcpy(at, word, size);
        if (word_index == 0 && n->style == CAMEL) { /* _lower_head */
            size_t run = 0;
            while (run < size && word[run] >= 'A' && word[run] <= 'Z') run++;
            size_t lower = run == 0 ? 0 : run == size || run == 1 ? run : run - 1;
            for (size_t k = 0; k < lower; k++) at[k] = (char)(word[k] + ('a' - 'A'));
        } else if (word[0] >= 'a' && word[0] <= 'z') {
            at[0] = (char)(word[0] - ('a' - 'A'));
        }
        out->len += (Py_ssize_t)size;
        word_index++;
    }
    if (word_index == 0) { /* no word: the name as it is */
        out->len = start_len;
        return buf_put(out, name, (Py_ssize_t)len);
    }
    return 0;
}

/* the key of the name the scratch holds (and reset it) */
static int32_t scratch_key(Names *n) {
    int32_t key = intern(n, n->scratch.data, n->scratch.len);
    n->scratch.len = 0;
    return key;
}

/* _Names.element: an element's JSON name; -1 out of memory, -2 a Python error */
static int32_t name_element(Names *n, Node *node) {
    Memo *memo = memo_slot(n, 0, node->uri, node->local);
    if (memo == NULL) return -1;
    if (memo->local == NULL) {
        const xmlChar *uri = node->uri;
        int32_t space = -1;
        n->scratch.len = 0;
        if (uri != NULL) {
            space = namespace_of(n, uri);
            if (space < 0) return -1;
            const char *text;
            if (SPACE(n, space)->assigned >= 0) {
                text = prefix_text(n, SPACE(n, space)->assigned);
            } else if (strcmp((const char *)uri, XML_NAMESPACE) == 0) {
                text = "xml";
            } else {
                int32_t prefix = fresh(n, node->prefix ? (const char *)node->prefix : "", 1);
                if (prefix < 0) return -1;
                SPACE(n, space)->assigned = prefix;
                text = prefix_text(n, prefix);
            }
            if (text[0] && (buf_str(&n->scratch, text) < 0 || buf_byte(&n->scratch, ':') < 0))
                return -1;
        }
        int styled = put_styled(n, &n->scratch, node->local);
        if (styled < 0) return styled;
        int32_t key = scratch_key(n);
        if (key < 0) return -1;
        memo->kind = 0;
        memo->uri = uri;
        memo->local = node->local;
        memo->key = key;
        memo->used = space;
        n->memo_count++;
    }
    return mark_used(n, memo->used) < 0 ? -1 : memo->key;
}

/* the naming pass walks the tree keeping the namespace declarations in scope: per prefix the
 * one that binds it, per namespace a stack of those that declare it, nearest first (an
 * element's own in document order), so that nsmap_prefix costs one step per declaration it
 * passes, not a walk over every declaration in scope (thousands, in a hostile document) */
static int enter_scope(Names *n, Doc *d, int32_t index) {
    Node *node = NODE(d, index);
    for (int32_t i = node->ns_count - 1; i >= 0; i--) { /* (the first ends on top) */
        int32_t at = node->ns + i;
        NsDecl *decl = &ITEMS(d->ns, NsDecl)[at];
        if (decl->prefix == NULL || decl->uri == NULL) continue; /* (the default namespace) */
        int32_t id = table_index(&n->scope, (const char *)decl->prefix, 1);
        if (id < 0) return -1;
        if (id == COUNT(n->bound, int32_t)) {
            int32_t none = -1;
            if (buf_put(&n->bound, &none, sizeof none) < 0) return -1;
        }
        int32_t space = namespace_of(n, decl->uri);
        if (space < 0) return -1;
        decl = &ITEMS(d->ns, NsDecl)[at];
        decl->prefix_id = id;
        decl->space = space;
        decl->hides = ITEMS(n->bound, int32_t)[id];
        ITEMS(n->bound, int32_t)[id] = at;
        decl->below = SPACE(n, space)->innermost;
        SPACE(n, space)->innermost = at;
    }
    return 0;
}

static void leave_scope(Names *n, Doc *d, int32_t index) {
    Node *node = NODE(d, index);
    for (int32_t i = 0; i < node->ns_count; i++) {
        NsDecl *decl = &ITEMS(d->ns, NsDecl)[node->ns + i];
        if (decl->prefix_id < 0) continue;
        ITEMS(n->bound, int32_t)[decl->prefix_id] = decl->hides;
        SPACE(n, decl->space)->innermost = decl->below;
        decl->prefix_id = -1;
    }
}

/* the declarations in scope at an element and its ancestors, the root's first (a SOAP Body's
 * content is named in the scope of the Envelope and the Body) */
static int enter_ancestors(Names *n, Doc *d, int32_t index) {
    if (index < 0) return 0;
    if (enter_ancestors(n, d, NODE(d, index)->parent) < 0) return -1;
    return enter_scope(n, d, index);
}

/* the first prefix in scope at the element being named (lxml's nsmap order: its own
 * declarations, then its parent's...; a prefix declared nearer hides the same prefix further
 * out) bound to space; "" if none */
static const char *nsmap_prefix(Names *n, Doc *d, int32_t space) {
    for (int32_t at = SPACE(n, space)->innermost; at >= 0; at = ITEMS(d->ns, NsDecl)[at].below) {
        NsDecl *decl = &ITEMS(d->ns, NsDecl)[at];
        if (ITEMS(n->bound, int32_t)[decl->prefix_id] == at) return (const char *)decl->prefix;
    }
    return "";
}

/* _Names.attribute: an attribute's JSON name; -1 out of memory, -2 a Python error */
static int32_t name_attribute(Names *n, Doc *d, Attr *attr) {
    Memo *memo = memo_slot(n, 1, attr->uri, attr->local);
    if (memo == NULL) return -1;
    if (memo->local == NULL) {
        const xmlChar *uri = attr->uri;
        int32_t used = -1;
        n->scratch.len = 0;
        if (buf_byte(&n->scratch, '@') < 0) return -1;
        int styled;
        if (uri == NULL) {
            styled = put_styled(n, &n->scratch, attr->local);
        } else if (strcmp((const char *)uri, XML_NAMESPACE) == 0) {
            styled = buf_str(&n->scratch, "xml:") < 0 ? -1
                                                       : buf_str(&n->scratch, (const char *)attr->local);
        } else {
            int32_t space = namespace_of(n, uri);
            if (space < 0) return -1;
            int32_t prefix = SPACE(n, space)->assigned;
            if (prefix < 0 || prefix_text(n, prefix)[0] == 0) {
                /* unseen, or the elements' default namespace: attributes need a prefix */
                int32_t found = SPACE(n, space)->attribute;
                if (found < 0) {
                    found = fresh(n, nsmap_prefix(n, d, space), 0);
                    if (found < 0) return -1;
                    if (prefix < 0)
                        SPACE(n, space)->assigned = found;
                    else
                        SPACE(n, space)->attribute = found;
                }
                prefix = found;
            }
            used = space;
            if (buf_str(&n->scratch, prefix_text(n, prefix)) < 0 || buf_byte(&n->scratch, ':') < 0)
                return -1;
            styled = put_styled(n, &n->scratch, attr->local);
        }
        if (styled < 0) return styled;
        int32_t key = scratch_key(n);
        if (key < 0) return -1;
        memo->kind = 1;
        memo->uri = attr->uri;
        memo->local = attr->local;
        memo->key = key;
        memo->used = used;
        n->memo_count++;
    }
    return mark_used(n, memo->used) < 0 ? -1 : memo->key;
}

/* names of the subtree below an element (its attributes, its children and theirs), in the
 * order the reference walks it: an element's attributes, then each child's name and subtree */
static int name_subtree(Names *n, Doc *d, int32_t index) {
    if (enter_scope(n, d, index) < 0) return -1;
    Node *node = NODE(d, index);
    for (int32_t i = 0; i < node->attr_count; i++) {
        Attr *attr = &ITEMS(d->attrs, Attr)[node->attrs + i];
        int32_t key = name_attribute(n, d, attr);
        if (key < 0) return key;
        attr->key = key;
    }
    for (int32_t child = node->first_child; child >= 0; child = NODE(d, child)->next) {
        int32_t key = name_element(n, NODE(d, child));
        if (key < 0) return key;
        NODE(d, child)->key = key;
        int result = name_subtree(n, d, child);
        if (result < 0) return result;
    }
    leave_scope(n, d, index);
    return 0;
}

typedef struct {
    int32_t key;
    const xmlChar *uri;
} Decl;

/* _Names.declarations: the @xmlns properties of the namespaces used since the last call,
 * kept on the element (a top-level one) */
static int declarations(Names *n, Node *node) {
    node->decls = (int32_t)COUNT(n->decls, Decl);
    int32_t *used = ITEMS(n->used, int32_t);
    for (Py_ssize_t i = 0; i < COUNT(n->used, int32_t); i++) {
        Namespace *space = SPACE(n, used[i]);
        int32_t prefixes[2] = {space->assigned, space->attribute};
        for (int k = 0; k < 2; k++) {
            if (k == 1 && prefixes[1] < 0) break;
            const char *prefix = prefixes[k] < 0 ? "" : prefix_text(n, prefixes[k]);
            n->scratch.len = 0;
            if (buf_str(&n->scratch, prefix[0] ? "@xmlns:" : "@xmlns") < 0 ||
                buf_str(&n->scratch, prefix) < 0)
                return -1;
            Decl decl = {scratch_key(n), space->uri};
            if (decl.key < 0 || buf_put(&n->decls, &decl, sizeof decl) < 0) return -1;
        }
    }
    node->decl_count = (int32_t)(COUNT(n->decls, Decl) - node->decls);
    n->used.len = 0;
    n->round++;
    return 0;
}

/* ------------------------------------------------------------------ the JSON text */

enum { DECLARED, ATTRIBUTE, CHILDREN, LEADING_TEXT, MIXED_TEXT };

typedef struct {
    int32_t key;
    int kind;
    int32_t first, last, count; /* DECLARED: the Decl; ATTRIBUTE: the Attr; CHILDREN: nodes */
} Entry;

typedef struct {
    Doc *doc;
    Names *names;
    Buf *out;
    Buf entries;       /* Entry: the objects being written, outermost first */
    int32_t *stamp;    /* per key: the object that has it (its serial) ... */
    int32_t *slot;     /* ... and its entry there */
    int32_t serial;
    Buf joined;        /* mixed text, joined to be stripped */
} Writer;

static int write_value(Writer *w, int32_t index);

/* a property of the object being written (starting at entry base): a value that replaces
 * one of the same name (a dict's assignment), or a child joining its name's array */
static int put_entry(Writer *w, int32_t key, int kind, int32_t item) {
    if (w->stamp[key] == w->serial) {
        Entry *entry = &ITEMS(w->entries, Entry)[w->slot[key]];
        if (kind == CHILDREN) {
            NODE(w->doc, entry->last)->same = item;
            entry->last = item;
            entry->count++;
        } else {
            entry->kind = kind;
            entry->first = item;
        }
        return 0;
    }
    Py_ssize_t at = PUSH(w->entries, Entry);
    if (at < 0) return -1;
    ITEMS(w->entries, Entry)[at] = (Entry){key, kind, item, item, 1};
    w->stamp[key] = w->serial;
    w->slot[key] = (int32_t)at;
    return 0;
}

static int write_key(Writer *w, int32_t key) {
    Key *k = &ITEMS(w->names->keys, Key)[key];
    return buf_put(w->out, w->names->json.data + k->json, k->json_len);
}

/* the text of an element with children: its text and its children's tails, joined, stripped */
static int write_mixed(Writer *w, Node *node) {
    Doc *d = w->doc;
    Buf *joined = &w->joined;
    joined->len = 0;
    if (buf_put(joined, d->text.data + node->text, node->text_len) < 0) return -1;
    for (int32_t child = node->first_child; child >= 0; child = NODE(d, child)->next) {
        Node *c = NODE(d, child);
        if (buf_put(joined, d->text.data + c->tail, c->tail_len) < 0) return -1;
    }
    Py_ssize_t start, end;
    python_strip((const unsigned char *)joined->data, joined->len, &start, &end);
    return put_string(w->out, (const unsigned char *)joined->data + start, end - start);
}

static int has_mixed_text(Doc *d, Node *node) {
    if (!all_space((const unsigned char *)d->text.data + node->text, node->text_len)) return 1;
    for (int32_t child = node->first_child; child >= 0; child = NODE(d, child)->next) {
        Node *c = NODE(d, child);
        if (!all_space((const unsigned char *)d->text.data + c->tail, c->tail_len)) return 1;
    }
    return 0;
}

/* the entries from base on, as one object */
static int write_entries(Writer *w, Py_ssize_t base) {
    Doc *d = w->doc;
    if (buf_byte(w->out, '{') < 0) return -1;
    for (Py_ssize_t i = base; i < COUNT(w->entries, Entry); i++) {
        Entry entry = ITEMS(w->entries, Entry)[i]; /* (a copy: nested values push entries) */
        if ((i > base && buf_byte(w->out, ',') < 0) || write_key(w, entry.key) < 0) return -1;
        int result;
        switch (entry.kind) {
        case DECLARED: {
            const xmlChar *uri = ITEMS(w->names->decls, Decl)[entry.first].uri;
            result = put_string(w->out, uri, (Py_ssize_t)strlen((const char *)uri));
            break;
        }
        case ATTRIBUTE: {
            Attr *attr = &ITEMS(d->attrs, Attr)[entry.first];
            result = put_string(w->out, (const unsigned char *)d->text.data + attr->value,
                                attr->value_len);
            break;
        }
        case LEADING_TEXT: {
            Node *node = NODE(d, entry.first);
            result = put_string(w->out, (const unsigned char *)d->text.data + node->text,
                                node->text_len);
            break;
        }
        case MIXED_TEXT:
            result = write_mixed(w, NODE(d, entry.first));
            break;
        default: /* CHILDREN */
            if (entry.count == 1) {
                result = write_value(w, entry.first);
                break;
            }
            result = buf_byte(w->out, '[');
            int32_t member = entry.first;
            for (int32_t k = 0; result == 0 && k < entry.count; k++) {
                if (k > 0) result = buf_byte(w->out, ',');
                if (result == 0) result = write_value(w, member);
                member = NODE(d, member)->same;
            }
            if (result == 0) result = buf_byte(w->out, ']');
        }
        if (result < 0) return -1;
    }
    return buf_byte(w->out, '}');
}

/* an element's value (_value), with its declarations first when it has some (_declared) */
static int write_value(Writer *w, int32_t index) {
    Doc *d = w->doc;
    Node *node = NODE(d, index);
    int leaf = node->attr_count == 0 && node->children == 0;
    if (leaf && node->decl_count == 0) {
        if (!node->has_text) return buf_str(w->out, "null");
        return put_string(w->out, (const unsigned char *)d->text.data + node->text, node->text_len);
    }
    Py_ssize_t base = COUNT(w->entries, Entry);
    w->serial++;
    for (int32_t i = 0; i < node->decl_count; i++)
        if (put_entry(w, ITEMS(w->names->decls, Decl)[node->decls + i].key, DECLARED,
                      node->decls + i) < 0)
            return -1;
    if (leaf) {
        if (node->has_text && put_entry(w, w->names->text_key, LEADING_TEXT, index) < 0) return -1;
    } else {
        for (int32_t i = 0; i < node->attr_count; i++)
            if (put_entry(w, ITEMS(d->attrs, Attr)[node->attrs + i].key, ATTRIBUTE,
                          node->attrs + i) < 0)
                return -1;
        for (int32_t child = node->first_child; child >= 0; child = NODE(d, child)->next) {
            NODE(d, child)->same = -1;
            if (put_entry(w, NODE(d, child)->key, CHILDREN, child) < 0) return -1;
        }
        int text;
        if (node->children)
            text = has_mixed_text(d, node) ? MIXED_TEXT : -1;
        else
            text = node->text_len > 0 ? LEADING_TEXT : -1;
        if (text >= 0 && put_entry(w, w->names->text_key, text, index) < 0) return -1;
    }
    int result = write_entries(w, base);
    w->entries.len = base * (Py_ssize_t)sizeof(Entry);
    return result;
}

static int writer_init(Writer *w, Doc *d, Names *n, Buf *out) {
    memset(w, 0, sizeof *w);
    w->doc = d;
    w->names = n;
    w->out = out;
    Py_ssize_t keys = COUNT(n->keys, Key);
    w->stamp = PyMem_Calloc((size_t)keys + 1, sizeof(int32_t));
    w->slot = PyMem_Calloc((size_t)keys + 1, sizeof(int32_t));
    return w->stamp == NULL || w->slot == NULL ? -1 : 0;
}

static void writer_free(Writer *w) {
    PyMem_Free(w->stamp);
    PyMem_Free(w->slot);
    buf_free(&w->entries);
    buf_free(&w->joined);
}

/* the JSON of the children of parent as one object (children_json): names each child's
 * subtree, with the declarations each uses, then writes them; -1 out of memory, -2 Python */
static int write_children(Doc *d, int32_t parent, int style, Buf *out) {
    Names names;
    Writer w = {0};
    int result = names_init(&names, style);
    if (result == 0) result = enter_ancestors(&names, d, parent);
    for (int32_t child = NODE(d, parent)->first_child; result == 0 && child >= 0;
         child = NODE(d, child)->next) {
        int32_t key = name_element(&names, NODE(d, child));
        if (key < 0) {
            result = key;
            break;
        }
        NODE(d, child)->key = key;
        result = name_subtree(&names, d, child);
        if (result == 0) result = declarations(&names, NODE(d, child));
    }
    if (result == 0) result = writer_init(&w, d, &names, out);
    if (result == 0) {
        Py_ssize_t base = COUNT(w.entries, Entry);
        w.serial++;
        for (int32_t child = NODE(d, parent)->first_child; result == 0 && child >= 0;
             child = NODE(d, child)->next) {
            NODE(d, child)->same = -1;
            result = put_entry(&w, NODE(d, child)->key, CHILDREN, child);
        }
        if (result == 0) result = write_entries(&w, base);
    }
    writer_free(&w);
    names_free(&names);
    return result;
}

/* the JSON of the root element (element_json) */
static int write_root(Doc *d, int style, Buf *out) {
    Names names;
    Writer w = {0};
    int32_t key = -1;
    int result = names_init(&names, style);
    if (result == 0) {
        key = name_element(&names, NODE(d, 0));
        result = key < 0 ? key : 0;
    }
    if (result == 0) {
        NODE(d, 0)->key = key;
        result = name_subtree(&names, d, 0);
    }
    if (result == 0) result = declarations(&names, NODE(d, 0));
    if (result == 0) result = writer_init(&w, d, &names, out);
    if (result == 0 && (buf_byte(out, '{') < 0 || write_key(&w, key) < 0 || write_value(&w, 0) < 0 ||
                        buf_byte(out, '}') < 0))
        result = -1;
    writer_free(&w);
    names_free(&names);
    return result;
}

/* ------------------------------------------------------------------ SOAP */

static int is(Node *node, const char *uri, const char *local) {
    if (strcmp((const char *)node->local, local) != 0) return 0;
    if (uri == NULL) return node->uri == NULL;
    return node->uri != NULL && strcmp((const char *)node->uri, uri) == 0;
}

static PyObject *text_of(Doc *d, Node *node) {
    return PyUnicode_DecodeUTF8(d->text.data + node->text, node->text_len, NULL);
}

/* (child.text or "").strip() */
static PyObject *stripped_text(Doc *d, Node *node) {
    Py_ssize_t start, end;
    const unsigned char *text = (const unsigned char *)d->text.data + node->text;
    python_strip(text, node->text_len, &start, &end);
    return PyUnicode_DecodeUTF8((const char *)text + start, end - start, NULL);
}

/* a fault's detail: its children as an object, or its text (None if none) */
static PyObject *detail_of(Doc *d, int32_t index) {
    Node *node = NODE(d, index);
    if (node->children == 0) {
        if (!node->has_text) Py_RETURN_NONE;
        return text_of(d, node);
    }
    Buf json = {0};
    int result = write_children(d, index, UNCHANGED, &json);
    PyObject *detail = NULL;
    if (result == -1) PyErr_NoMemory();
    if (result == 0) {
        PyObject *text = PyBytes_FromStringAndSize(json.data, json.len);
        if (text != NULL) {
            detail = PyObject_CallOneArg(LOADS, text);
            Py_DECREF(text);
        }
    }
    buf_free(&json);
    return detail;
}

static int replace(PyObject **slot, PyObject *value) {
    if (value == NULL) return -1;
    Py_SETREF(*slot, value);
    return 0;
}

/* the SoapFault of a Fault element (_fault) */
static PyObject *fault(Doc *d, int32_t index, const char *ns) {
    PyObject *code = PyUnicode_FromStringAndSize("", 0);
    PyObject *text = PyUnicode_FromStringAndSize("", 0);
    PyObject *detail = Py_NewRef(Py_None);
    int soap11 = strcmp(ns, SOAP11_NAMESPACE) == 0;
    int result = code == NULL || text == NULL ? -1 : 0;
    for (int32_t c = NODE(d, index)->first_child; result == 0 && c >= 0; c = NODE(d, c)->next) {
        Node *child = NODE(d, c);
        if (soap11) { /* faultcode, faultstring, detail: unqualified */
            if (is(child, NULL, "faultcode"))
                result = replace(&code, stripped_text(d, child));
            else if (is(child, NULL, "faultstring"))
                result = replace(&text, stripped_text(d, child));
            else if (is(child, NULL, "detail"))
                result = replace(&detail, detail_of(d, c));
            continue;
        }
        if (is(child, ns, "Code")) { /* 1.2: Code/Value, Reason/Text, Detail */
            for (int32_t p = child->first_child; result == 0 && p >= 0; p = NODE(d, p)->next)
                if (is(NODE(d, p), ns, "Value")) result = replace(&code, stripped_text(d, NODE(d, p)));
        } else if (is(child, ns, "Reason")) {
            for (int32_t p = child->first_child; p >= 0; p = NODE(d, p)->next) {
                if (!is(NODE(d, p), ns, "Text")) continue;
                result = replace(&text, stripped_text(d, NODE(d, p)));
                break;
            }
        } else if (is(child, ns, "Detail")) {
            result = replace(&detail, detail_of(d, c));
        }
    }
    if (result == 0) {
        PyObject *error = PyObject_CallFunctionObjArgs(SOAP_FAULT, code, text, detail, NULL);
        if (error != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(error), error);
            Py_DECREF(error);
        }
    }
    Py_XDECREF(code);
    Py_XDECREF(text);
    Py_XDECREF(detail);
    return NULL;
}

/* the Body's content (soap_body + children_json), or a refusal, or the fault */
static int write_soap(Doc *d, const char *ns, int style, Buf *out) {
    const char *version = strcmp(ns, SOAP11_NAMESPACE) == 0 ? "1.1" : "1.2";
    Node *root = NODE(d, 0);
    if (!is(root, ns, "Envelope")) {
        if (root->uri)
            PyErr_Format(MALFORMED, "not a SOAP %s envelope (root element {%s}%s)", version,
                         root->uri, root->local);
        else
            PyErr_Format(MALFORMED, "not a SOAP %s envelope (root element %s)", version, root->local);
        return -2;
    }
    int32_t body = root->first_child;
    while (body >= 0 && !is(NODE(d, body), ns, "Body")) body = NODE(d, body)->next;
    if (body < 0) {
        PyErr_Format(MALFORMED, "the SOAP %s envelope has no Body", version);
        return -2;
    }
    int32_t first = NODE(d, body)->first_child;
    if (first >= 0 && is(NODE(d, first), ns, "Fault")) {
        fault(d, first, ns);
        return -2;
    }
    return write_children(d, body, style, out);
}

/* ------------------------------------------------------------------ the function */

static void doc_free(Doc *d) {
    buf_free(&d->nodes);
    buf_free(&d->attrs);
    buf_free(&d->ns);
    buf_free(&d->text);
    buf_free(&d->message);
}

/* xml_to_json(data: bytes, style: int, soap: str) -> bytes */
/* the arguments of the module's functions: 0, or -1 with TypeError raised */
static int arguments(PyObject *const *args, Py_ssize_t nargs, long *style, const char **soap) {
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyLong_Check(args[1]) ||
        !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "xml_to_json(data: bytes, style: int, soap: str)");
        return -1;
    }
    *style = PyLong_AsLong(args[1]);
    if (*style == -1 && PyErr_Occurred()) return -1;
    *soap = PyUnicode_AsUTF8(args[2]);
    return *soap == NULL ? -1 : 0;
}

/* the strict path: libxml2 decides what is accepted, and tells why it is not */
static PyObject *strict_to_json(PyObject *data, long style, const char *soap) {
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size == 0)
        return malformed("not well-formed XML: Document is empty, line 1, column 1 "
                         "(<string>, line 1)");
    if (size > INT_MAX) return PyErr_NoMemory();

    Doc d;
    memset(&d, 0, sizeof d);
    d.open = d.run = -1;
    Buf out = {0}; /* written in place in the answer's bytes object: no copy at the end */
    PyObject *result = NULL;
    /* room for what a document usually needs: fewer reallocations */
    if (buf_reserve(&d.text, size) < 0 || buf_reserve(&d.nodes, (size / 24 + 16) * (Py_ssize_t)sizeof(Node)) < 0 ||
        bytes_buf(&out, size + 64) < 0) {
        doc_free(&d);
        buf_free(&out);
        return PyErr_NoMemory();
    }
    xmlParserCtxtPtr ctxt = xmlCreateMemoryParserCtxt(PyBytes_AS_STRING(data), (int)size);
    if (ctxt == NULL) {
        doc_free(&d);
        buf_free(&out);
        return PyErr_NoMemory();
    }
    *ctxt->sax = HANDLER;
    ctxt->userData = &d;
    d.ctxt = ctxt;
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlCtxtUseOptions(ctxt, XML_PARSE_NONET);
    xmlParseDocument(ctxt);
    int written = -2;
    if (d.failed) {
        PyErr_NoMemory();
    } else if (d.doctype) {
        malformed("a document type declaration (DTD) is not allowed");
    } else if (d.erred || !ctxt->wellFormed || COUNT(d.nodes, Node) == 0) {
        not_well_formed(&d);
    } else {
        /* the names are libxml2's (its dictionary): written before the context is freed */
        written = soap[0] ? write_soap(&d, soap, (int)style, &out) : write_root(&d, (int)style, &out);
        if (written == -1) PyErr_NoMemory();
    }
    xmlFreeParserCtxt(ctxt);
    if (written == 0) {
        if (_PyBytes_Resize(&out.bytes, out.len) == 0) result = out.bytes;
        out.bytes = NULL; /* (returned, or freed by the resize that failed) */
        out.data = NULL;
    }
    doc_free(&d);
    buf_free(&out);
    return result;
}

/* which paths a call takes: the fast one (_xml_fast.cc) for the documents it vouches for
 * and the strict one for the others (xml_to_json); or, for the tests, one of them alone */
enum { BOTH_PATHS, STRICT_PATH, FAST_PATH };

/* the JSON text by those paths: the same JSON text, or the strict path's refusal; None
 * where the fast path alone declines */
static PyObject *by(int paths, PyObject *const *args, Py_ssize_t nargs) {
    long style;
    const char *soap;
    if (arguments(args, nargs, &style, &soap) < 0) return NULL;
    if (paths != STRICT_PATH) {
        int declined;
        PyObject *fast = xml_fast_to_json(PyBytes_AS_STRING(args[0]), PyBytes_GET_SIZE(args[0]),
                                          (int)style, soap, &declined);
        if (fast != NULL || !declined) return fast;
        if (paths == FAST_PATH) Py_RETURN_NONE;
    }
    return strict_to_json(args[0], style, soap);
}

static PyObject *xml_to_json(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return by(BOTH_PATHS, args, nargs);
}

static PyObject *strict_only(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return by(STRICT_PATH, args, nargs);
}

static PyObject *fast_only(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return by(FAST_PATH, args, nargs);
}

/* ------------------------------------------------------------------ the module */

static PyMethodDef METHODS[] = {
    {"xml_to_json", (PyCFunction)(void (*)(void))xml_to_json, METH_FASTCALL,
     "xml_to_json(data, style, soap): the JSON text of an XML document (see _xml_json.py)."},
    {"strict_to_json", (PyCFunction)(void (*)(void))strict_only, METH_FASTCALL,
     "strict_to_json(data, style, soap): xml_to_json by the strict path alone (tests)."},
    {"fast_to_json", (PyCFunction)(void (*)(void))fast_only, METH_FASTCALL,
     "fast_to_json(data, style, soap): xml_to_json by the fast path alone, None where it "
     "declines (tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "portico.gateway.plugins._xml_json",
    "XML to JSON text for xml-to-json, with libxml2 (see _xml_json.py).", -1, METHODS,
};

static PyObject *attribute(const char *module, const char *name) {
    PyObject *found = PyImport_ImportModule(module);
    if (found == NULL) return NULL;
    PyObject *value = PyObject_GetAttrString(found, name);
    Py_DECREF(found);
    return value;
}

PyMODINIT_FUNC PyInit__xml_json(void) {
    /* the libxml2 this was compiled against, not another one's functions: loaded with
     * RTLD_GLOBAL (sys.setdlopenflags), a module carrying its own libxml2 (lxml) would have
     * its symbols found first, and its structures are not this version's */
    if (strncmp(xmlParserVersion, LIBXML_VERSION_STRING, strlen(LIBXML_VERSION_STRING)) != 0) {
        PyErr_Format(PyExc_ImportError,
                     "_xml_json was built against libxml2 %s but calls libxml2 %s (a module "
                     "loaded with RTLD_GLOBAL carries its own?)",
                     LIBXML_VERSION_STRING, xmlParserVersion);
        return NULL;
    }
    for (int c = 0; c < 0x20; c++) ESCAPED[c] = 1;
    ESCAPED['"'] = ESCAPED['\\'] = 1;
    handler_init();
    xmlInitParser();
    const char *mapping = "portico.gateway.plugins._xml_mapping";
    MALFORMED = attribute(mapping, "MalformedXml");
    SOAP_FAULT = attribute(mapping, "SoapFault");
    STYLED = attribute(mapping, "styled");
    LOADS = attribute("orjson", "loads");
    if (MALFORMED == NULL || SOAP_FAULT == NULL || STYLED == NULL || LOADS == NULL) return NULL;
    return PyModule_Create(&MODULE);
}

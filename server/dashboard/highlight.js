// A tiny syntax highlighter for the generated Ascend C and ASC-IR (and a kernel's Python): at each position the first of
// the language's rules that matches makes a token (a span of that class); the rest stays text.
// It builds DOM nodes, never HTML: the source is a stranger's text.
const CPP_KEYWORDS = ["auto", "bool", "break", "case", "char", "class", "const", "constexpr", "continue",
  "default", "do", "double", "else", "enum", "extern", "false", "float", "for", "if", "inline", "int",
  "long", "namespace", "nullptr", "private", "public", "return", "short", "signed", "sizeof", "static",
  "struct", "switch", "template", "this", "true", "typedef", "typename", "unsigned", "using", "void",
  "volatile", "while", "half", "bfloat16_t", "__aicore__", "__global__", "__gm__",
  "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t"];

const PYTHON_KEYWORDS = ["and", "as", "assert", "break", "continue", "def", "elif", "else", "False", "for", "from",
  "if", "import", "in", "is", "lambda", "None", "not", "or", "pass", "return", "True", "while", "with", "yield"];

const LANGUAGES = {
  python: [  // highlighted a line at a time (the dashboard numbers them): no rule spans lines
    ["comment", /#[^\n]*/],
    ["string", /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/],
    ["attribute", /@[\w.]+/],  // decorators
    ["keyword", new RegExp(`\\b(?:${PYTHON_KEYWORDS.join("|")})\\b`)],
    ["number", /\b\d+(?:\.\d*)?(?:[eE][+-]?\d+)?\b/],
    ["function", /\b[A-Za-z_]\w*(?=\()/],
  ],
  cpp: [
    ["comment", /\/\/[^\n]*|\/\*[\s\S]*?\*\//],
    ["string", /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/],
    ["preprocessor", /#[ \t]*[a-z]+/],
    ["keyword", new RegExp(`\\b(?:${CPP_KEYWORDS.join("|")})\\b`)],
    ["number", /\b(?:0[xX][\da-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*\b/],
    ["function", /\b[A-Za-z_]\w*(?=\s*\()/],
    ["type", /\b[A-Z]\w*\b/],  // Ascend C's classes and enums are CamelCase
  ],
  mlir: [
    ["comment", /\/\/[^\n]*/],
    ["string", /"(?:[^"\\\n]|\\.)*"/],
    ["value", /%[\w.$#-]+/],  // SSA values
    ["symbol", /@[\w.$-]+/],  // functions
    ["label", /\^[\w.$-]+/],  // blocks
    ["type", /![\w.]+|\b(?:[iuf]\d+|bf16|index|memref|tensor|vector|none)\b/],
    ["attribute", /#[\w.]+/],
    ["function", /\b[a-z_]\w*\.[a-z_][\w.]*/],  // operations: dialect.name
    ["number", /\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/],
  ],
};

// One regular expression per language, a capturing group per rule.
const MATCHERS = Object.fromEntries(Object.entries(LANGUAGES).map(([language, rules]) =>
  [language, new RegExp(rules.map(([, rule]) => `(${rule.source})`).join("|"), "g")]));

export function highlight(text, language) {
  const rules = LANGUAGES[language];
  const fragment = document.createDocumentFragment();
  let shown = 0;
  for (const match of text.matchAll(MATCHERS[language])) {
    const rule = match.findIndex((group, i) => i > 0 && group !== undefined) - 1;
    fragment.append(text.slice(shown, match.index));
    const token = document.createElement("span");
    token.className = `tok-${rules[rule][0]}`;
    token.textContent = match[0];
    fragment.append(token);
    shown = match.index + match[0].length;
  }
  fragment.append(text.slice(shown));
  return fragment;
}

// Typeset the formulas pymdownx.arithmatex (generic mode) left as \( … \) and \[ … \] in
// .arithmatex elements, on every page load (Material's instant navigation included).
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false, // a bad formula shows as a red .katex-error (the site test fails on one)
    });
  }
});

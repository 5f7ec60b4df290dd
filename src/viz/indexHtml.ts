// The Mermaid bundle sits next to the page (no CDN), so it works offline and from `file://`.

export interface DiagramPage {
  readonly name: string;
  readonly exportName: string;
  readonly description: string | undefined;
  readonly mermaid: string;
}

export interface IndexHtmlOptions {
  readonly mermaidScript: string;
  readonly mermaidVersion: string;
}

/** Deterministic, so the committed page can be checked for staleness. */
export function renderIndexHtml(diagrams: readonly DiagramPage[], options: IndexHtmlOptions): string {
  const toc = diagrams.map((d) => `      <li><a href="#${attr(d.name)}">${html(d.name)}</a></li>`).join('\n');
  const sections = diagrams.map((d) => section(d)).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>actorloop state machines</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1800px; padding: 1rem 2rem; color: #1f2328; }
    header p, footer { color: #57606a; }
    section { border-top: 1px solid #d0d7de; padding: 1rem 0 2rem; }
    .diagram { overflow-x: auto; }
    /* Fit to the page by default; a click shows the diagram at its natural size. */
    .diagram svg { display: block; margin: 0 auto; max-width: 100%; height: auto; cursor: zoom-in; }
    .diagram.actual-size svg { max-width: none; cursor: zoom-out; }
    .error { color: #cf222e; white-space: pre-wrap; }
    pre.source { background: #f6f8fa; padding: 1rem; overflow-x: auto; font-size: 12px; }
  </style>
</head>
<body>
  <header>
    <h1>actorloop state machines</h1>
    <p>Generated from <code>machines/index.ts</code> by <code>npm run viz</code>; do not edit by hand.</p>
    <ul>
${toc}
    </ul>
  </header>
${sections}
  <footer>Rendered in your browser by Mermaid ${html(options.mermaidVersion)} from <code>${html(options.mermaidScript)}</code>.</footer>
  <script src="${attr(options.mermaidScript)}"></script>
  <script>
${PAGE_SCRIPT}
  </script>
</body>
</html>
`;
}

function section(d: DiagramPage): string {
  const links = [`<a href="${attr(d.name)}.mmd">${html(d.name)}.mmd</a>`, `<a href="${attr(d.name)}.svg">${html(d.name)}.svg</a>`];
  const description = d.description === undefined ? '' : `\n    <p>${html(d.description)}</p>`;
  return `  <section id="${attr(d.name)}" data-diagram="${attr(d.name)}">
    <h2>${html(d.name)} <small><code>${html(d.exportName)}</code></small></h2>${description}
    <div class="diagram" id="diagram-${attr(d.name)}"></div>
    <details>
      <summary>Mermaid source (${links.join(', ')})</summary>
      <pre class="source">${html(d.mermaid)}</pre>
    </details>
  </section>`;
}

// Renders one diagram after another (Mermaid's render is not re-entrant) and reports the outcome
// on window.__viz, so a headless browser can tell "still rendering" from "failed".
const PAGE_SCRIPT = `    (async () => {
      const status = { done: false, rendered: [], errors: [] };
      window.__viz = status;
      try {
        if (typeof mermaid === 'undefined') throw new Error('The Mermaid bundle did not load: run npm run viz.');
        mermaid.initialize({
          startOnLoad: false,
          securityLevel: 'strict',
          deterministicIds: true,
          // Notes are drawn with rough.js, which is random unless seeded: a fixed seed keeps SVGs stable.
          handDrawnSeed: 1,
          theme: 'default',
          state: { useMaxWidth: false },
        });
        for (const section of document.querySelectorAll('[data-diagram]')) {
          const name = section.dataset.diagram;
          const target = section.querySelector('.diagram');
          try {
            const { svg } = await mermaid.render('svg-' + name, section.querySelector('pre.source').textContent);
            target.innerHTML = svg;
            target.title = 'Click to toggle between fit-to-page and actual size';
            target.addEventListener('click', () => target.classList.toggle('actual-size'));
            status.rendered.push(name);
          } catch (error) {
            target.innerHTML = '';
            const message = document.createElement('p');
            message.className = 'error';
            message.textContent = 'Could not render ' + name + ': ' + (error && error.message ? error.message : error);
            target.append(message);
            status.errors.push(message.textContent);
            console.error(message.textContent);
          }
        }
      } catch (error) {
        status.errors.push(String(error && error.message ? error.message : error));
        console.error(error);
      }
      status.done = true;
      document.body.dataset.vizDone = 'true';
    })();`;

function html(text: string): string {
  return text.replace(/[&<>]/g, (ch) => (ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : '&gt;'));
}

function attr(text: string): string {
  return html(text).replace(/"/g, '&quot;');
}

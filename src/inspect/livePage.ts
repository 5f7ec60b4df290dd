// Self-contained (inline CSS and script): it works with the network cut, and the relay's CSP keeps it that way.
import { CONVERSATION_SCRIPT, CONVERSATION_STYLE } from './conversationScript.ts';
import { LIVE_PAGE_SCRIPT } from './livePageScript.ts';

export interface LivePageOptions {
  readonly nonce: string;
  readonly diagrams: readonly string[];
}

const STYLE = `
  * { box-sizing: border-box; }
  html, body { margin: 0; height: 100%; }
  body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; display: flex; flex-direction: column; }
  header { display: flex; gap: 12px; align-items: baseline; padding: 8px 14px; background: #24292f; color: #fff; }
  header h1 { font-size: 15px; margin: 0; }
  #al-status { font-size: 12px; color: #d0d7de; }
  #al-status.al-connected { color: #7ee787; }
  #al-status.al-disconnected { color: #ffa198; }
  main { flex: 1; min-height: 0; display: flex; flex-direction: column; gap: 8px; padding: 8px; }
  #al-conversation-box { flex: 1; min-height: 120px; }
  #al-machines { flex: 0 0 auto; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
  #al-machines[open] { flex: 1 1 60%; min-height: 0; display: flex; flex-direction: column; }
  #al-machines > summary { cursor: pointer; padding: 6px 10px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
  #al-machines-grid { flex: 1; min-height: 0; height: 70vh; display: grid; grid-template-columns: minmax(260px, 28%) 1fr; grid-template-rows: 1fr 1fr; gap: 8px; padding: 0 8px 8px; }
  section.al-box { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; overflow: auto; min-height: 0; }
  section.al-box > h2 { position: sticky; top: 0; z-index: 1; margin: 0; padding: 6px 10px; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; background: #f6f8fa; border-bottom: 1px solid #d0d7de; }
  #al-tree-box { grid-column: 1; grid-row: 1; }
  #al-events-box { grid-column: 1; grid-row: 2; }
  #al-panels-box { grid-column: 2; grid-row: 1 / span 2; }
  #al-tree ul { list-style: none; margin: 0; padding-left: 14px; }
  #al-tree > ul { padding: 6px 8px; }
  .al-actor { margin: 2px 0; }
  .al-actor > span { margin-right: 6px; }
  .al-name { font-weight: 600; }
  .al-label, .al-machine { color: #57606a; }
  .al-state { font-family: ui-monospace, monospace; background: #fff8c5; padding: 0 4px; border-radius: 3px; }
  .al-status { font-size: 11px; color: #57606a; }
  .al-actor.al-finished > .al-name { color: #8c959f; }
  #al-events { list-style: none; margin: 0; padding: 4px 8px; font-family: ui-monospace, monospace; font-size: 12px; }
  .al-event > span { margin-right: 8px; }
  .al-time { color: #8c959f; }
  .al-target { color: #0550ae; }
  .al-type { font-weight: 600; }
  .al-source { color: #8c959f; }
  #al-panels { padding: 8px; display: flex; flex-direction: column; gap: 10px; }
  .al-panel { border: 1px solid #d0d7de; border-radius: 6px; }
  .al-panel.al-finished { opacity: .6; }
  .al-panel h3 { margin: 0; padding: 6px 10px; font-size: 13px; border-bottom: 1px solid #d0d7de; }
  .al-svg svg { display: block; width: 100%; height: auto; max-height: 80vh; }
  .al-svg g.al-current > g > rect.outer { stroke: #bf8700 !important; stroke-width: 4px !important; }
  .al-svg g.node.al-current > g > rect.outer { fill: #fff1b3 !important; }
  .al-empty { color: #8c959f; padding: 8px 10px; margin: 0; }
${CONVERSATION_STYLE}`;

/** The diagram list is embedded, so the page never asks for a diagram that is not there. */
export function livePage(options: LivePageOptions): string {
  const diagrams = JSON.stringify(options.diagrams).replace(/</g, '\\u003c');
  const nonce = options.nonce.replace(/[^A-Za-z0-9+/=]/g, '');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>actorloop live view</title>
  <link rel="icon" href="data:,">
  <style>${STYLE}</style>
</head>
<body>
  <header><h1>actorloop live view</h1><span id="al-status">connecting…</span></header>
  <main>
    <section class="al-box" id="al-conversation-box"><h2>Conversation</h2><div id="al-conversation"><p class="al-empty">No run followed yet: pass a run to inspector.follow(run).</p></div></section>
    <details id="al-machines"><summary>Machines (actors, diagrams, machine events)</summary><div id="al-machines-grid">
      <section class="al-box" id="al-tree-box"><h2>Actors</h2><div id="al-tree"><p class="al-empty">No actors yet.</p></div></section>
      <section class="al-box" id="al-events-box"><h2>Machine events</h2><ol id="al-events"></ol></section>
      <section class="al-box" id="al-panels-box"><h2>Diagrams</h2><div id="al-panels"></div></section>
    </div></details>
  </main>
  <script type="application/json" id="al-diagrams">${diagrams}</script>
  <script nonce="${nonce}">${CONVERSATION_SCRIPT}${LIVE_PAGE_SCRIPT}</script>
</body>
</html>`;
}

/**
 * The chat page: plain HTML and one inline script, no framework and no request beyond its own
 * server. It posts an AG-UI `RunAgentInput`, reads the run's server-sent events from the
 * response, and draws them with the conversation script the live view uses; a held tool call
 * ends the response with AG-UI's interrupt and gets approve and reject buttons that post to the
 * handler's `runs/:runId/approve|reject`, then stream the run on after the interrupt's event.
 */
import { CONVERSATION_SCRIPT, CONVERSATION_STYLE } from '../../src/inspect/conversationScript.ts';

/** Where the page posts runs; the AG-UI handler is mounted there. */
export const CHAT_API = '/api/agent';

const STYLE = `
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; }
  main { max-width: 760px; margin: 0 auto; padding: 16px; display: flex; flex-direction: column; gap: 10px; min-height: 100vh; }
  h1 { font-size: 17px; margin: 0; }
  #conversation { flex: 1; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; overflow: auto; }
  .al-empty { color: #8c959f; padding: 10px; margin: 0; }
  form { display: flex; gap: 8px; }
  #task { flex: 1; padding: 8px; font: inherit; }
  button { font: inherit; padding: 6px 12px; cursor: pointer; }
  .chat-decide { display: flex; gap: 8px; margin-top: 6px; }
  .chat-error { color: #cf222e; padding: 6px 10px; }
${CONVERSATION_STYLE}`;

// No backticks below and no "${" beyond the API path: the script is the body of a template literal.
const SCRIPT = `
(() => {
  'use strict';
  const API = ${JSON.stringify(CHAT_API)};
  const byId = (id) => document.getElementById(id);
  const form = byId('ask');
  const input = byId('task');
  const send = byId('send');
  const conversationEl = byId('conversation');
  const threadId = 'thread_' + crypto.randomUUID();
  const messages = [];

  const post = (path, body) => fetch(API + path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
  const problem = (text) => {
    const p = document.createElement('p');
    p.className = 'chat-error';
    p.textContent = text;
    conversationEl.append(p);
  };
  const errorOf = async (response) => {
    try { return (await response.json()).error.message; } catch { return 'HTTP ' + response.status; }
  };

  const conversation = window.actorloopConversation(conversationEl, {
    onWait(runId, wait, element) {
      const row = document.createElement('div');
      row.className = 'chat-decide';
      for (const action of ['approve', 'reject']) {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = action === 'approve' ? 'Approve' : 'Reject';
        button.setAttribute('data-action', action);
        button.addEventListener('click', async () => {
          for (const b of row.querySelectorAll('button')) b.disabled = true;
          const response = await post('/runs/' + encodeURIComponent(runId) + '/' + action, { toolCallIds: wait.toolCallIds });
          if (!response.ok) {
            problem(await errorOf(response));
            for (const b of row.querySelectorAll('button')) b.disabled = false;
            return;
          }
          // The response ended at the interrupt: the run goes on in a stream after its last event.
          const rest = await fetch(API + '/runs/' + encodeURIComponent(runId) + '/stream', { headers: { accept: 'text/event-stream', 'last-event-id': lastIds.get(runId) || '' } });
          if (!rest.ok || rest.body === null) return problem(await errorOf(rest));
          await follow(runId, rest).catch((error) => problem(String(error)));
        });
        row.append(button);
      }
      element.append(row);
    },
  });

  async function ask(task) {
    const runId = 'chat_' + crypto.randomUUID();
    messages.push({ id: runId + ':user', role: 'user', content: task });
    conversation.user(runId, task);
    const response = await post('', { threadId, runId, messages, state: {}, tools: [], context: [], forwardedProps: {} });
    if (!response.ok || response.body === null) return problem(await errorOf(response));
    await follow(runId, response);
  }

  /** The last event id of each run's stream: where it goes on after an interrupt. */
  const lastIds = new Map();

  /** Draw a run's events from a response as they arrive. */
  async function follow(runId, response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\\n\\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = block.split('\\n').find((line) => line.startsWith('id:'));
        if (id !== undefined) lastIds.set(runId, id.slice(3).trim());
        const data = block.split('\\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\\n');
        if (data === '') continue;
        const event = JSON.parse(data);
        conversation.handle(runId, event);
        if (event.type === 'RUN_FINISHED' && event.result && typeof event.result.text === 'string') {
          messages.push({ id: runId + ':answer', role: 'assistant', content: event.result.text });
        }
      }
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const task = input.value.trim();
    if (task === '') return;
    input.value = '';
    send.disabled = true;
    ask(task).catch((error) => problem(String(error))).finally(() => { send.disabled = false; input.focus(); });
  });
})();
`;

/**
 * The page's HTML; `nonce` lets its inline script run under the server's policy.
 *
 * @example
 * ```ts
 * response.end(chatPage(nonce));
 * ```
 */
export function chatPage(nonce: string, placeholder: string): string {
  const safeNonce = nonce.replace(/[^A-Za-z0-9+/=]/g, '');
  const safePlaceholder = placeholder.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>actorloop chat</title>
  <link rel="icon" href="data:,">
  <style>${STYLE}</style>
</head>
<body>
  <main>
    <h1>actorloop chat</h1>
    <div id="conversation"><p class="al-empty">Ask the demo agent something.</p></div>
    <form id="ask"><input id="task" autocomplete="off" placeholder="${safePlaceholder}" aria-label="Your message"><button id="send" type="submit">Send</button></form>
  </main>
  <script nonce="${safeNonce}">${CONVERSATION_SCRIPT}${SCRIPT}</script>
</body>
</html>`;
}

// A string, as the project compiles without the DOM library; shared by the live page and `examples/chat`.
// `hooks.onWait(runId, value, element)` lets a page put its own controls (approve, reject) into a wait.

export const CONVERSATION_MAX_RUNS = 50;

export const CONVERSATION_STYLE = `
  .al-run { border-bottom: 1px solid #d0d7de; padding: 8px 10px; display: flex; flex-direction: column; gap: 6px; }
  .al-run > h3 { margin: 0; font-size: 11px; color: #57606a; font-weight: 600; font-family: ui-monospace, monospace; }
  .al-msg { padding: 6px 10px; border-radius: 8px; white-space: pre-wrap; max-width: 90%; }
  .al-user { align-self: flex-end; background: #ddf4ff; }
  .al-assistant { align-self: flex-start; background: #f6f8fa; border: 1px solid #d0d7de; }
  .al-reasoning { color: #57606a; font-size: 12px; }
  .al-reasoning > div { white-space: pre-wrap; }
  .al-tool { border: 1px solid #d4a72c; border-radius: 6px; background: #fff8c5; padding: 4px 8px; font-size: 12px; }
  .al-tool pre { margin: 2px 0; white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; }
  .al-tool-name { font-weight: 600; font-family: ui-monospace, monospace; }
  .al-tool-status, .al-gate { color: #57606a; margin-left: 8px; }
  .al-gate.al-held, .al-gate.al-refused { color: #cf222e; font-weight: 600; }
  .al-result::before { content: "\\2192  "; color: #57606a; }
  .al-wait { border: 1px dashed #cf222e; border-radius: 6px; padding: 6px 8px; background: #ffebe9; }
  .al-wait.al-answered { border-color: #d0d7de; background: #f6f8fa; }
  .al-note { font-size: 12px; color: #57606a; }
  .al-end { font-size: 12px; font-weight: 600; color: #1a7f37; }
  .al-end.al-failed { color: #cf222e; }
`;

// No backticks below, and no "${" beyond the cap: the script is the body of a template literal.
export const CONVERSATION_SCRIPT = `
window.actorloopConversation = (root, hooks) => {
  'use strict';
  const MAX_RUNS = ${CONVERSATION_MAX_RUNS};
  const runs = new Map();
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
  };
  const str = (value) => (typeof value === 'string' ? value : '');

  function runFor(runId) {
    let run = runs.get(runId);
    if (run !== undefined) return run;
    const section = el('section', 'al-run');
    section.setAttribute('data-run-id', runId);
    section.append(el('h3', '', 'run ' + runId));
    run = { section, messages: new Map(), tools: new Map(), reasoning: undefined, wait: undefined };
    runs.set(runId, run);
    root.querySelector(':scope > .al-empty')?.remove();
    root.append(section);
    while (runs.size > MAX_RUNS) {
      const [oldest, old] = runs.entries().next().value;
      old.section.remove();
      runs.delete(oldest);
    }
    return run;
  }
  const add = (run, node) => { run.section.append(node); node.scrollIntoView?.({ block: 'nearest' }); return node; };

  /** \`agentId\`, when given, names whose run it is: with several agents (delegation) each run says its agent. */
  function user(runId, text, agentId) {
    const run = runFor(runId);
    if (typeof agentId === 'string' && agentId !== '') {
      run.section.setAttribute('data-agent-id', agentId);
      run.section.querySelector(':scope > h3').textContent = agentId + ' \\u00b7 run ' + runId;
    }
    add(run, el('div', 'al-msg al-user', text));
  }

  function tool(run, id) {
    let card = run.tools.get(id);
    if (card !== undefined) return card;
    const root = el('div', 'al-tool');
    root.setAttribute('data-tool-call-id', id);
    const head = el('div');
    const name = el('span', 'al-tool-name', '?');
    const status = el('span', 'al-tool-status');
    const gate = el('span', 'al-gate');
    head.append(name, gate, status);
    const args = el('pre', 'al-args');
    const result = el('pre', 'al-result');
    result.hidden = true;
    root.append(head, args, result);
    card = { root, name, status, gate, args, result };
    run.tools.set(id, card);
    add(run, root);
    return card;
  }

  function custom(run, runId, name, value) {
    const v = value && typeof value === 'object' ? value : {};
    switch (name) {
      case 'actorloop.thinking.delta': {
        if (run.reasoning === undefined) {
          const details = add(run, el('details', 'al-reasoning'));
          details.append(el('summary', '', 'reasoning'));
          run.reasoning = details.appendChild(el('div'));
        }
        run.reasoning.append(str(v.delta));
        return;
      }
      case 'actorloop.policy.evaluated': {
        const card = tool(run, str(v.toolCallId));
        if (card.name.textContent === '?') card.name.textContent = str(v.tool);
        const decision = str(v.decision);
        card.gate.textContent = 'gate: ' + decision + (v.reason ? ' \\u2014 ' + str(v.reason) : '');
        card.gate.className = 'al-gate' + (decision === 'confirm' ? ' al-held' : decision === 'allow' ? '' : ' al-refused');
        return;
      }
      case 'actorloop.tool.started':
        tool(run, str(v.toolCallId)).status.textContent = 'running';
        return;
      case 'actorloop.tool.finished':
        tool(run, str(v.toolCallId)).status.textContent = str(v.status);
        return;
      case 'actorloop.human.awaiting': {
        const ids = Array.isArray(v.toolCallIds) ? v.toolCallIds.map(str) : [];
        const names = ids.map((id) => (run.tools.has(id) ? run.tools.get(id).name.textContent : id));
        const wait = add(run, el('div', 'al-wait'));
        wait.setAttribute('data-tool-call-ids', ids.join(' '));
        wait.append(el('div', '', 'Waiting for a human (' + str(v.kind) + '): ' + names.join(', ')));
        for (const r of Array.isArray(v.reasons) ? v.reasons : []) wait.append(el('div', 'al-note', str(r && r.reason)));
        run.wait = wait;
        hooks?.onWait?.(runId, v, wait);
        return;
      }
      case 'actorloop.human.decided': {
        if (run.wait !== undefined) run.wait.classList.add('al-answered');
        run.wait = undefined;
        add(run, el('div', 'al-note', 'human: ' + str(v.decision) + (v.reason ? ' \\u2014 ' + str(v.reason) : '')));
        return;
      }
      case 'actorloop.recovery.triggered':
        add(run, el('div', 'al-note', 'recovery (' + str(v.strategy) + ') for ' + str(v.tool) + ': ' + str(v.error)));
        return;
      case 'actorloop.provider.retry':
        add(run, el('div', 'al-note', 'model call retried (attempt ' + String(v.attempt) + '): ' + str(v.error)));
        return;
      case 'actorloop.reply.truncated':
      case 'actorloop.step.limit_reached':
      case 'actorloop.context.compacted':
      case 'actorloop.run.resumed':
        add(run, el('div', 'al-note', name.slice('actorloop.'.length)));
        return;
      default:
        return;
    }
  }

  function usageText(usage, cost) {
    if (!usage || typeof usage !== 'object') return '';
    let text = ' \\u00b7 tokens ' + String(usage.promptTokens) + ' in / ' + String(usage.completionTokens) + ' out';
    if (typeof cost === 'number') text += ' \\u00b7 $' + cost.toFixed(4);
    return text;
  }

  function handle(runId, event) {
    if (!event || typeof event !== 'object' || typeof runId !== 'string') return;
    const run = runFor(runId);
    switch (event.type) {
      case 'TEXT_MESSAGE_START': {
        run.reasoning = undefined;
        const node = add(run, el('div', 'al-msg al-assistant'));
        node.setAttribute('data-message-id', str(event.messageId));
        run.messages.set(event.messageId, node);
        return;
      }
      case 'TEXT_MESSAGE_CONTENT':
        run.messages.get(event.messageId)?.append(str(event.delta));
        return;
      case 'TEXT_MESSAGE_END':
        run.messages.get(event.messageId)?.classList.add('al-done');
        return;
      case 'TOOL_CALL_START': {
        run.reasoning = undefined;
        tool(run, str(event.toolCallId)).name.textContent = str(event.toolCallName);
        return;
      }
      case 'TOOL_CALL_ARGS':
        tool(run, str(event.toolCallId)).args.append(str(event.delta));
        return;
      case 'TOOL_CALL_RESULT': {
        const card = tool(run, str(event.toolCallId));
        card.result.textContent = str(event.content);
        card.result.hidden = false;
        return;
      }
      case 'CUSTOM':
        custom(run, runId, str(event.name), event.value);
        return;
      case 'RUN_FINISHED': {
        // An AG-UI run that ends at a wait for a human: the wait shows it, and the run goes on.
        if (event.outcome && event.outcome.type === 'interrupt') return;
        const result = event.result && typeof event.result === 'object' ? event.result : {};
        add(run, el('div', 'al-end', 'finished (' + str(result.reason) + ', ' + String(result.iterations) + ' iterations)' + usageText(result.usage, result.costUsd)));
        return;
      }
      case 'RUN_ERROR':
        add(run, el('div', 'al-end al-failed', 'failed (' + str(event.code) + '): ' + str(event.message)));
        return;
      default:
        return;
    }
  }

  return { user, handle };
};
`;

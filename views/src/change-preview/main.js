// change-preview: the dry-run preview (or the outcome) of any change tool,
// as a card. Data: shared/toolcall's PreviewResult in structuredContent
// ({dryRun, tool, class, target, commands, summary, state, effect,
// confirmation}); a fleet's preview (state by instance) shows one section per
// instance; any other result of the tool is shown as its outcome. The call's
// arguments (tool-input) give the before → after of the fields it sets.
// There is deliberately no approve button.
import { connect, dataOf } from "../lib/bridge.js";
import { render, messageView } from "../lib/dom.js";
import { outcomeCard } from "../lib/preview.js";

const root = document.getElementById("app");
let args = {};
const app = connect({
  name: "mcpfleet-change-preview",
  onInput(a) {
    args = a;
  },
  onResult(result) {
    const res = dataOf(result);
    render(root, outcomeCard(app.toolName((res.data && res.data.tool) || "change"), res, args));
  },
  onCancelled(reason) {
    render(root, messageView("The call was cancelled", reason));
  },
});

// change-preview: the dry-run preview (or the outcome) of any change tool,
// as a card. Data: shared/toolcall's PreviewResult in structuredContent
// ({dryRun, tool, class, target, commands, summary, state, effect,
// confirmation}); any other result of the tool is shown as its outcome.
// There is deliberately no approve button.
import { connect, dataOf } from "../lib/bridge.js";
import { render, messageView } from "../lib/dom.js";
import { outcomeCard } from "../lib/preview.js";

const root = document.getElementById("app");
const app = connect({
  name: "mcpfleet-change-preview",
  onResult(result) {
    const res = dataOf(result);
    render(root, outcomeCard(app.toolName((res.data && res.data.tool) || "change"), res));
  },
  onCancelled(reason) {
    render(root, messageView("The call was cancelled", reason));
  },
});

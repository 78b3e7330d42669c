package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo/memory/toolmem"
)

// The tool-usage tools: toolmem.Memory's Store and Retrieve.

type usageStoreIn struct {
	Question      string         `json:"question" jsonschema:"the question or task the tool call answered, in natural language"`
	ToolName      string         `json:"tool_name" jsonschema:"the name of the tool that was called"`
	ToolArgs      map[string]any `json:"tool_args,omitempty" jsonschema:"the arguments that worked, as a JSON object"`
	ResultSummary string         `json:"result_summary,omitempty" jsonschema:"what the call returned, in short; kept to its first 300 characters"`
}

type usageStoreOut struct {
	ID string `json:"id" jsonschema:"the new entry's ID"`
}

type usageRetrieveIn struct {
	Question  string   `json:"question" jsonschema:"the question or task at hand"`
	TopK      int      `json:"top_k,omitempty" jsonschema:"how many entries at most; default 3"`
	Threshold *float64 `json:"threshold,omitempty" jsonschema:"the least similarity an entry must have, 0 to 1; default: the embedder's own (0.05 for the offline one)"`
}

type usageEntry struct {
	ID            string         `json:"id"`
	Question      string         `json:"question"`
	ToolName      string         `json:"tool_name"`
	ToolArgs      map[string]any `json:"tool_args"`
	ResultSummary string         `json:"result_summary"`
	Similarity    float32        `json:"similarity" jsonschema:"similarity of the entry's question to this one, 0 to 1"`
	Timestamp     time.Time      `json:"timestamp"`
}

type usageRetrieveOut struct {
	Entries []usageEntry `json:"entries" jsonschema:"the entries found, most similar first"`
}

func (t *Tools) registerUsage(s *mcp.Server) {
	add(t, s, &mcp.Tool{
		Name: "tool_usage_store",
		Description: fmt.Sprintf("Remember which tool, with which arguments, answered a question, so that a similar question later can reuse it "+
			"(find it with %stool_usage_retrieve). Store after a tool call that worked. question and result_summary at most %d bytes each, tool_args at most %d bytes as JSON.",
			t.prefix, t.maxText, t.maxText),
		Annotations: annotate(additive, "Store a tool use"),
	}, t.usageStore)
	add(t, s, &mcp.Tool{
		Name: "tool_usage_retrieve",
		Description: fmt.Sprintf("Find the stored tool uses whose questions are most similar to this one, most similar first, with the tool, "+
			"the arguments that worked and a summary of the result. Use it before choosing a tool for a task. Returns at most %d entries.", MaxResults),
		Annotations: annotate(readOnly, "Retrieve tool uses"),
	}, t.usageRetrieve)
}

func (t *Tools) usageStore(ctx context.Context, in usageStoreIn) (usageStoreOut, error) {
	for _, a := range []struct{ name, s string }{{"question", in.Question}, {"tool_name", in.ToolName}, {"result_summary", in.ResultSummary}} {
		if err := t.checkText(a.name, a.s); err != nil {
			return usageStoreOut{}, err
		}
	}
	if in.ToolName == "" {
		return usageStoreOut{}, fmt.Errorf("%w: tool_name is empty", ErrInvalid)
	}
	if in.ToolArgs != nil {
		b, err := json.Marshal(in.ToolArgs)
		if err != nil {
			return usageStoreOut{}, fmt.Errorf("%w: tool_args: %v", ErrInvalid, err)
		}
		if err := t.checkText("tool_args", string(b)); err != nil {
			return usageStoreOut{}, err
		}
	}
	id, err := t.usage.Store(ctx, toolmem.Entry{
		Question:      in.Question,
		ToolName:      in.ToolName,
		ToolArgs:      in.ToolArgs,
		ResultSummary: toolmem.Summarize(in.ResultSummary),
	})
	return usageStoreOut{ID: id}, err
}

func (t *Tools) usageRetrieve(ctx context.Context, in usageRetrieveIn) (usageRetrieveOut, error) {
	if err := t.checkText("question", in.Question); err != nil {
		return usageRetrieveOut{}, err
	}
	k, err := results("top_k", in.TopK, toolmem.DefaultTopK, MaxResults)
	if err != nil {
		return usageRetrieveOut{}, err
	}
	s := &toolmem.Search{TopK: k}
	if in.Threshold != nil {
		th := *in.Threshold
		if math.IsNaN(th) || th < 0 || th > 1 {
			return usageRetrieveOut{}, fmt.Errorf("%w: threshold %v, want 0 to 1", ErrInvalid, th)
		}
		s.Threshold = new(float32(th))
	}
	entries, err := t.usage.Retrieve(ctx, in.Question, s)
	if err != nil {
		return usageRetrieveOut{}, err
	}
	out := usageRetrieveOut{Entries: make([]usageEntry, len(entries))}
	for i, e := range entries {
		if e.ToolArgs == nil {
			e.ToolArgs = map[string]any{}
		}
		out.Entries[i] = usageEntry{ID: e.ID, Question: e.Question, ToolName: e.ToolName, ToolArgs: e.ToolArgs,
			ResultSummary: e.ResultSummary, Similarity: e.Similarity, Timestamp: e.Timestamp}
	}
	return out, nil
}

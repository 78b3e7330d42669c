// Command example is an Eino RAG agent whose knowledge lives in mnemo: a
// graph feeds the question to a mnemo retriever and to the prompt, and the
// prompt, holding the retrieved documents, to a chat model. The model is
// scripted (it answers from the first retrieved document) and the embedder
// is mnemo's offline one, so it runs without a network or an API key:
//
//	go run ./example                  # an embedded database in memory
//	go run ./example -db DIR          # on disk
//	go run ./example -pg postgres://  # in PostgreSQL with pgvector
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	einomnemo "github.com/mnemodb/mnemo/integrations/eino"
	"github.com/mnemodb/mnemo/postgres"
)

// scriptedModel is a chat model that answers from the context it is given:
// the first line after "Context:" in the system message.
type scriptedModel struct{}

func (scriptedModel) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	answer := "I don't know."
	for _, m := range msgs {
		if _, ctx, ok := strings.Cut(m.Content, "Context:\n- "); ok && m.Role == schema.System {
			first, _, _ := strings.Cut(ctx, "\n")
			answer = "From my notes: " + first
		}
	}
	return schema.AssistantMessage(answer, nil), nil
}

func (m scriptedModel) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	out, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{out}), nil
}

var notes = []*schema.Document{
	{ID: "paul", Content: "Paul works at Google as an engineer.", MetaData: map[string]any{"topic": "people"}},
	{ID: "anna", Content: "Anna runs a bakery in Lyon.", MetaData: map[string]any{"topic": "people"}},
	{ID: "meeting", Content: "The team meeting moved to Thursday at 10.", MetaData: map[string]any{"topic": "calendar"}},
	{ID: "wifi", Content: "The office wifi password is on the fridge.", MetaData: map[string]any{"topic": "office"}},
}

func main() {
	dir := flag.String("db", "", "embedded database directory (default: in memory)")
	dsn := flag.String("pg", "", "PostgreSQL URL (instead of an embedded database)")
	flag.Parse()
	if err := run(context.Background(), *dir, *dsn); err != nil {
		log.Fatal(err)
	}
}

// open opens the agent's database: PostgreSQL when dsn is set, else the
// embedded engine in dir (in memory when dir is empty).
func open(ctx context.Context, dir, dsn string) (mnemo.Store, error) {
	if dsn != "" {
		return postgres.Open(ctx, dsn, nil)
	}
	return engine.OpenStore(dir, &engine.Options{InMemory: dir == ""})
}

func run(ctx context.Context, dir, dsn string) error {
	db, err := open(ctx, dir, dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	idx, err := einomnemo.NewIndexer(ctx, db, nil) // the offline hashing embedder
	if err != nil {
		return err
	}
	if _, err := idx.Store(ctx, notes); err != nil { // by ID: a rerun replaces them
		return err
	}
	ret, err := einomnemo.NewRetriever(ctx, db, &einomnemo.RetrieverConfig{TopK: 2})
	if err != nil {
		return err
	}

	agent, err := build(ctx, ret)
	if err != nil {
		return err
	}
	for _, q := range []string{"Where does Paul work?", "When is the team meeting?", "What is the capital of Peru?"} {
		answer, err := agent.Invoke(ctx, q,
			compose.WithRetrieverOption(retriever.WithScoreThreshold(0.1), einomnemo.WithFilter(`{"topic": {"$ne": "office"}}`)))
		if err != nil {
			return err
		}
		fmt.Printf("user: %s\nagent: %s\n", q, answer.Content)
	}
	return nil
}

// build compiles the graph: START -> retriever -> prompt -> model -> END,
// with the question also passed from START to the prompt.
func build(ctx context.Context, ret retriever.Retriever) (compose.Runnable[string, *schema.Message], error) {
	g := compose.NewGraph[string, *schema.Message]()
	pass := compose.InvokableLambda(func(_ context.Context, q string) (string, error) { return q, nil })
	prompt := compose.InvokableLambda(func(_ context.Context, in map[string]any) ([]*schema.Message, error) {
		docs, _ := in["docs"].([]*schema.Document)
		system := "Answer from the context only."
		if len(docs) > 0 {
			system += "\nContext:"
			for _, d := range docs {
				system += "\n- " + d.Content
			}
		}
		question, _ := in["question"].(string)
		return []*schema.Message{schema.SystemMessage(system), schema.UserMessage(question)}, nil
	})
	for _, err := range []error{
		g.AddRetrieverNode("retriever", ret, compose.WithOutputKey("docs")),
		g.AddLambdaNode("question", pass, compose.WithOutputKey("question")),
		g.AddLambdaNode("prompt", prompt),
		g.AddChatModelNode("model", scriptedModel{}),
		g.AddEdge(compose.START, "retriever"),
		g.AddEdge(compose.START, "question"),
		g.AddEdge("retriever", "prompt"),
		g.AddEdge("question", "prompt"),
		g.AddEdge("prompt", "model"),
		g.AddEdge("model", compose.END),
	} {
		if err != nil {
			return nil, err
		}
	}
	return g.Compile(ctx)
}

// Command example is a langchaingo agent whose documents and conversation
// live in mnemo: a retriever over a mnemo vector store feeds a model, and
// the conversation is kept in a mnemo chat history that survives a
// restart. The model is scripted (it answers from the first retrieved
// document) and the embedder is mnemo's offline one, so it runs without a
// network or an API key:
//
//	go run ./example                  # an embedded database in memory
//	go run ./example -db DIR          # on disk; run again to see the history resumed
//	go run ./example -pg postgres://  # in PostgreSQL with pgvector
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	lcmnemo "github.com/mnemodb/mnemo/integrations/langchaingo"
	"github.com/mnemodb/mnemo/postgres"
)

// scriptedModel is an llms.Model that answers from the context it is
// given: the first line after "Context:" in the system message.
type scriptedModel struct{}

func (scriptedModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	answer := "I don't know."
	for _, m := range msgs {
		if m.Role != llms.ChatMessageTypeSystem {
			continue
		}
		for _, p := range m.Parts {
			text, _ := p.(llms.TextContent)
			if _, ctx, ok := strings.Cut(text.Text, "Context:\n- "); ok {
				first, _, _ := strings.Cut(ctx, "\n")
				answer = "From my notes: " + first
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: answer}}}, nil
}

func (m scriptedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

var notes = []schema.Document{
	{PageContent: "Paul works at Google as an engineer.", Metadata: map[string]any{"topic": "people"}},
	{PageContent: "Anna runs a bakery in Lyon.", Metadata: map[string]any{"topic": "people"}},
	{PageContent: "The team meeting moved to Thursday at 10.", Metadata: map[string]any{"topic": "calendar"}},
	{PageContent: "The office wifi password is on the fridge.", Metadata: map[string]any{"topic": "office"}},
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

	store, err := lcmnemo.NewStore(ctx, db, nil) // the offline hashing embedder
	if err != nil {
		return err
	}
	if _, err := db.Collection(ctx, lcmnemo.DefaultCollection); errors.Is(err, mnemo.ErrCollectionNotFound) { // a first run
		if _, err := store.AddDocuments(ctx, notes); err != nil {
			return err
		}
	}
	history, err := lcmnemo.NewHistory(ctx, db, "demo", nil)
	if err != nil {
		return err
	}
	defer history.Close()
	if past, err := history.Messages(ctx); err == nil && len(past) > 0 {
		fmt.Printf("(resuming a conversation of %d messages)\n", len(past))
	}

	retriever := vectorstores.ToRetriever(store, 2, vectorstores.WithScoreThreshold(0.1))
	agent := &agent{model: scriptedModel{}, retriever: retriever, history: history}
	for _, q := range []string{"Where does Paul work?", "When is the team meeting?", "What is the capital of Peru?"} {
		answer, err := agent.ask(ctx, q)
		if err != nil {
			return err
		}
		fmt.Printf("user: %s\nagent: %s\n", q, answer)
	}
	return nil
}

// agent answers a question with the documents the retriever finds and the
// conversation so far, and records the turn.
type agent struct {
	model     llms.Model
	retriever schema.Retriever
	history   schema.ChatMessageHistory
}

func (a *agent) ask(ctx context.Context, question string) (string, error) {
	docs, err := a.retriever.GetRelevantDocuments(ctx, question)
	if err != nil {
		return "", err
	}
	system := "Answer from the context only."
	if len(docs) > 0 {
		system += "\nContext:"
		for _, d := range docs {
			system += "\n- " + d.PageContent
		}
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, system)}
	past, err := a.history.Messages(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range past {
		msgs = append(msgs, llms.TextParts(m.GetType(), m.GetContent()))
	}
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, question))
	answer, err := a.model.GenerateContent(ctx, msgs)
	if err != nil {
		return "", err
	}
	text := answer.Choices[0].Content
	if err := a.history.AddUserMessage(ctx, question); err != nil {
		return "", err
	}
	return text, a.history.AddAIMessage(ctx, text)
}

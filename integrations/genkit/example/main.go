// Command example is a Genkit RAG flow whose knowledge lives in mnemo: the
// flow retrieves documents with a mnemo retriever and generates an answer
// grounded in them. The model is scripted (it answers from the first
// document it is given) and the embedder is mnemo's offline one, so it
// runs without a network or an API key:
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

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	genkitmnemo "github.com/mnemodb/mnemo/integrations/genkit"
	"github.com/mnemodb/mnemo/postgres"
)

var notes = []*ai.Document{
	ai.DocumentFromText("Paul works at Google as an engineer.", map[string]any{"topic": "people"}),
	ai.DocumentFromText("Anna runs a bakery in Lyon.", map[string]any{"topic": "people"}),
	ai.DocumentFromText("The team meeting moved to Thursday at 10.", map[string]any{"topic": "calendar"}),
	ai.DocumentFromText("The office wifi password is on the fridge.", map[string]any{"topic": "office"}),
}

func main() {
	dir := flag.String("db", "", "embedded database directory (default: in memory)")
	dsn := flag.String("pg", "", "PostgreSQL URL (instead of an embedded database)")
	flag.Parse()
	if err := run(context.Background(), *dir, *dsn); err != nil {
		log.Fatal(err)
	}
}

// open opens the flow's database: PostgreSQL when dsn is set, else the
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

	g := genkit.Init(ctx)
	ds, retriever, err := genkitmnemo.DefineRetriever(ctx, g, db, "notes", nil, nil) // the offline hashing embedder
	if err != nil {
		return err
	}
	if err := genkitmnemo.Index(ctx, notes, ds); err != nil { // by content: a rerun stores nothing new
		return err
	}
	model := genkit.DefineModel(g, "scripted/notes", &ai.ModelOptions{Supports: &ai.ModelSupports{Context: true}}, answerFromDocs)

	answer := genkit.DefineFlow(g, "answer", func(ctx context.Context, question string) (string, error) {
		resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs(question),
			ai.WithConfig(&genkitmnemo.RetrieverOptions{K: 2, MinScore: new(0.1), Filter: `{"topic": {"$ne": "office"}}`}))
		if err != nil {
			return "", err
		}
		return genkit.GenerateText(ctx, g, ai.WithModel(model), ai.WithPrompt(question), ai.WithDocs(resp.Documents...))
	})
	for _, q := range []string{"Where does Paul work?", "When is the team meeting?", "What is the capital of Peru?"} {
		a, err := answer.Run(ctx, q)
		if err != nil {
			return err
		}
		fmt.Printf("user: %s\nagent: %s\n", q, a)
	}
	return nil
}

// answerFromDocs is a scripted model: it answers from the first document
// of the request.
func answerFromDocs(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	answer := "I don't know."
	if len(req.Docs) > 0 {
		answer = "From my notes: " + req.Docs[0].Content[0].Text
	}
	return &ai.ModelResponse{Request: req, Message: ai.NewModelTextMessage(answer), FinishReason: ai.FinishReasonStop}, nil
}

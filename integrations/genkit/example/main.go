// Command example is a Genkit RAG flow whose knowledge lives in mnemo: the
// flow retrieves documents with a mnemo retriever and generates an answer
// grounded in them. The model is scripted (it answers from the first
// document it is given) and the embedder is mnemo's offline one, so it
// runs without a network or an API key:
//
//	go run ./example            # a database in a temporary directory
//	go run ./example -db DIR    # keep it
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo/engine"
	mnemo "github.com/mnemodb/mnemo/integrations/genkit"
)

var notes = []*ai.Document{
	ai.DocumentFromText("Paul works at Google as an engineer.", map[string]any{"topic": "people"}),
	ai.DocumentFromText("Anna runs a bakery in Lyon.", map[string]any{"topic": "people"}),
	ai.DocumentFromText("The team meeting moved to Thursday at 10.", map[string]any{"topic": "calendar"}),
	ai.DocumentFromText("The office wifi password is on the fridge.", map[string]any{"topic": "office"}),
}

func main() {
	dir := flag.String("db", "", "database directory (default: a temporary one)")
	flag.Parse()
	if err := run(context.Background(), *dir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "mnemo-genkit-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, err := engine.Open(dir, nil)
	if err != nil {
		return err
	}
	defer db.Close()

	g := genkit.Init(ctx)
	ds, retriever, err := mnemo.DefineRetriever(g, db, "notes", nil, nil) // the offline hashing embedder
	if err != nil {
		return err
	}
	if err := mnemo.Index(ctx, notes, ds); err != nil { // by content: a rerun stores nothing new
		return err
	}
	model := genkit.DefineModel(g, "scripted/notes", &ai.ModelOptions{Supports: &ai.ModelSupports{Context: true}}, answerFromDocs)

	answer := genkit.DefineFlow(g, "answer", func(ctx context.Context, question string) (string, error) {
		resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs(question),
			ai.WithConfig(&mnemo.RetrieverOptions{K: 2, MinScore: new(0.1), Filter: `{"topic": {"$ne": "office"}}`}))
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
